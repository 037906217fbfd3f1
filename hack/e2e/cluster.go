/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// webhookNodePort is the webhook Service's node port: kube-proxy answers
// it on the node's address (hostIP) only. publicURL is the webhook's
// public URL (the chart's publicURL): the node port, as a load balancer in
// front of the node would reach it.
const webhookNodePort = 30080

var publicURL = fmt.Sprintf("http://%s:%d", hostIP, webhookNodePort)

const (
	releaseName      = "switchboard"
	releaseNamespace = "switchboard-system"
	// smokeNamespace holds the smoke check's resources.
	smokeNamespace = "e2e"
)

// upstreamsUp starts the sandbox (every SaaS API) and versitygw (S3) on
// the bridge address, where the pods reach them as their gateway. They
// run on the host, not as pods: they are the test's instruments, not the
// product — the test reads the sandbox's admin routes and versitygw's
// root keys directly, and neither has an image (building and loading two
// more images would test nothing of Switchboard's).
func (e *e2e) upstreamsUp(ctx context.Context) error {
	sbPort, err := freePort(hostIP)
	if err != nil {
		return err
	}
	seed := e.p.at("sandbox-seed.json")
	if err := os.WriteFile(seed, scenario.SandboxSeed(), 0o600); err != nil {
		return err
	}
	e.sandboxURL = "http://" + net.JoinHostPort(hostIP, sbPort)
	sb, err := e.start("sandbox", filepath.Join(e.bin, "sandbox"),
		append([]string{"--addr", net.JoinHostPort(hostIP, sbPort), "--seed", seed}, scenario.SandboxArgs()...))
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, sb, e.sandboxURL+"/_sandbox/routes", time.Minute); err != nil {
		return err
	}
	// versitygw as every suite runs it (random root keys, through its
	// environment), on the bridge address; it dies with this process.
	if e.s3, err = testenv.StartS3At(hostIP); err != nil {
		return err
	}

	ups := map[string]string{}
	for _, n := range upstream.Names() {
		ups[string(n)] = e.sandboxURL + "/" + string(n)
	}
	ups["s3"] = e.s3.Endpoint
	values := map[string]any{
		// The images were imported into containerd: never pull.
		"image":     map[string]any{"pullPolicy": "Never"},
		"upstreams": ups,
		// Traffic arrives as it would from a load balancer: at the
		// webhook Service's node port, on the node's address.
		"publicURL": publicURL,
		"webhook":   map[string]any{"service": map[string]any{"type": "NodePort", "nodePort": webhookNodePort}},
		// A leader and a hot standby, for the leader's loss.
		"manager": map[string]any{"replicas": 2},
		// Every webhook request with its route, status and duration, in
		// the pod logs kept in logs/pods.
		"log": map[string]any{"level": "debug"},
	}
	b, err := yaml.Marshal(values)
	if err != nil {
		return err
	}
	fmt.Printf("    sandbox %s, versitygw %s\n", e.sandboxURL, e.s3.Endpoint)
	return os.WriteFile(e.p.at("values.yaml"), b, 0o644)
}

// install runs helm install as a platform team would and waits for both
// Deployments to be Available, which their readiness probes decide.
func (e *e2e) install(ctx context.Context) error {
	helm := exec.CommandContext(ctx, filepath.Join(e.bin, "helm"), "install", releaseName, filepath.Join("charts", "switchboard"),
		"--kubeconfig", e.p.kubeconfig("admin"), "--namespace", releaseNamespace, "--create-namespace",
		"--values", e.p.at("values.yaml"))
	out, err := helm.CombinedOutput()
	if err != nil {
		return fmt.Errorf("helm install: %w\n%s", err, out)
	}
	fmt.Printf("    helm install: %s\n", firstLine(string(out), "STATUS:"))
	if _, err := e.kubectl(ctx, "wait", "--namespace", releaseNamespace, "--for=condition=Available",
		"deployment", "--all", "--timeout=5m"); err != nil {
		pods, _ := e.kubectl(ctx, "get", "pods", "-A", "-o", "wide")
		events, _ := e.kubectl(ctx, "get", "events", "-n", releaseNamespace, "--sort-by=.lastTimestamp")
		return fmt.Errorf("%w\n%s\n%s", err, pods, events)
	}
	out2, err := e.kubectl(ctx, "get", "deployments,pods", "--namespace", releaseNamespace, "-o", "wide")
	if err != nil {
		return err
	}
	fmt.Print(indent(out2))
	return nil
}

// smoke checks the release end to end once: a SlideStock reaches Ready
// (the manager in its pod reached the API server through the
// `kubernetes` Service and the sandbox through the bridge), and the
// webhook Service's ClusterIP, reached from the host through kube-proxy's
// rules, answers an unknown path with the JSON 404.
func (e *e2e) smoke(ctx context.Context) error {
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: smokeNamespace}}); err != nil {
		return err
	}
	s, err := e.stock(ctx, smokeNamespace, "docswell-deck", 2*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("    SlideStock %s/%s Ready: %q (%s)\n", s.Namespace, s.Name, s.Status.Title, s.Status.Provider)

	var svc corev1.Service
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: releaseName + "-webhook"}, &svc); err != nil {
		return fmt.Errorf("the webhook Service: %w", err)
	}
	if len(svc.Spec.Ports) == 0 || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return fmt.Errorf("the webhook Service has no ClusterIP and port: %+v", svc.Spec)
	}
	url := fmt.Sprintf("http://%s/no/such/route", net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(svc.Spec.Ports[0].Port)))
	var status int
	var body []byte
	// kube-proxy programs the Service's rules when its endpoints are
	// ready: until then the ClusterIP does not answer.
	if err := waitFor(ctx, time.Minute, "the webhook Service at "+url, func() (bool, error) {
		var err error
		status, body, err = httpGet(ctx, url)
		return err == nil, err
	}); err != nil {
		return err
	}
	// The webhook's error format: {"error":{"code":…,"message":…,"details":{}}}.
	var answer struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if status != 404 || json.Unmarshal(body, &answer) != nil || answer.Error.Code != "NOT_FOUND" {
		return fmt.Errorf("GET %s answered %d %s, want 404 with code NOT_FOUND", url, status, body)
	}
	fmt.Printf("    GET %s → %d %s\n", url, status, bytes.TrimSpace(body))
	return nil
}

// stock creates a SlideStock of scenario.DeckURL and waits until the
// manager has stocked it (Ready), failing at once if it Failed.
func (e *e2e) stock(ctx context.Context, namespace, name string, timeout time.Duration) (*v1alpha1.SlideStock, error) {
	s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	s.Spec.URL = scenario.DeckURL
	if err := e.c.Create(ctx, s); err != nil {
		return nil, fmt.Errorf("create SlideStock %s: %w", name, err)
	}
	return s, waitFor(ctx, timeout, "SlideStock "+name+" Ready", func() (bool, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return false, err
		}
		if s.Status.Phase == v1alpha1.SlideFailed {
			return false, fmt.Errorf("SlideStock %w: %s", errFailed, s.Status.LastError)
		}
		return s.Status.Phase == v1alpha1.SlideReady, fmt.Errorf("phase %q", s.Status.Phase)
	})
}

// teardown stops the node in order and proves the host is as it was.
func (e *e2e) teardown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Pods first, while kubelet runs: it stops their containers and has
	// the CNI plugin remove their network namespaces, veths and addresses.
	// The controllers go before, so that nothing replaces them.
	if e.running("kube-apiserver") && e.c != nil {
		e.savePodLogs(ctx)
	}
	if e.running("kubelet") && e.running("kube-apiserver") && e.c != nil {
		for _, n := range []string{"kube-controller-manager", "kube-scheduler"} {
			if pr := e.procs[n]; pr != nil {
				pr.stop(15 * time.Second)
			}
		}
		if err := e.deletePods(ctx); err != nil {
			fmt.Printf("    pods not all gone through kubelet (%v); killing what is left\n", err)
		}
	}
	for _, n := range []string{"kube-proxy", "kubelet", "containerd"} {
		if pr := e.procs[n]; pr != nil {
			pr.stop(20 * time.Second)
		}
	}
	for i := len(e.order) - 1; i >= 0; i-- {
		e.procs[e.order[i]].stop(15 * time.Second)
	}
	if e.s3 != nil {
		if err := e.s3.Stop(); err != nil {
			fmt.Printf("    versitygw: %v\n", err)
		}
	}
	return e.cleanHost()
}

// savePodLogs keeps every pod's log and the cluster's Events in
// logs/pods/, before the pods and their logs go.
func (e *e2e) savePodLogs(ctx context.Context) {
	dir := filepath.Join(e.p.logs(), "pods")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Printf("    pod logs: %v\n", err)
		return
	}
	var list corev1.PodList
	if err := e.c.List(ctx, &list); err != nil {
		fmt.Printf("    pod logs: %v\n", err)
		return
	}
	for _, p := range list.Items {
		out, _ := e.kubectl(ctx, "logs", "--namespace", p.Namespace, p.Name, "--all-containers", "--timestamps")
		_ = os.WriteFile(filepath.Join(dir, p.Namespace+"_"+p.Name+".log"), []byte(out), 0o644)
	}
	events, _ := e.kubectl(ctx, "get", "events", "--all-namespaces", "--sort-by=.lastTimestamp")
	_ = os.WriteFile(filepath.Join(dir, "events.txt"), []byte(events), 0o644)
	fmt.Printf("    kept %d pods' logs and the Events in %s\n", len(list.Items), dir)
}

// running reports whether the program name was started and still runs.
func (e *e2e) running(name string) bool {
	pr := e.procs[name]
	if pr == nil {
		return false
	}
	return !pr.exited()
}

// deletePods deletes every pod, with a short grace period, and waits
// until kubelet has stopped them all.
func (e *e2e) deletePods(ctx context.Context) error {
	var list corev1.PodList
	if err := e.c.List(ctx, &list); err != nil {
		return err
	}
	grace := int64(5)
	for i := range list.Items {
		_ = e.c.Delete(ctx, &list.Items[i], &client.DeleteOptions{GracePeriodSeconds: &grace})
	}
	return waitFor(ctx, 90*time.Second, "pods deleted", func() (bool, error) {
		var l corev1.PodList
		if err := e.c.List(ctx, &l); err != nil {
			return false, err
		}
		return len(l.Items) == 0, fmt.Errorf("%d pods left", len(l.Items))
	})
}

// cleanHost removes what the node's programs leave behind them, restores
// the sysctls, and compares the host with the listing from before.
func (e *e2e) cleanHost() error {
	stopRecorded(e.p)
	var problems []string
	if killed := killLeftovers(e.p); len(killed) > 0 {
		fmt.Printf("    killed %d leftover processes\n", len(killed))
	}
	problems = append(problems, unmountAll(e.p)...)
	problems = append(problems, removeCgroups()...)
	if e.node != "" {
		// kube-proxy's own removal of its rules (iptables, ip6tables, and
		// the nftables tables other modes would have made).
		if out, err := exec.Command(filepath.Join(e.node, "kube-proxy"), "--cleanup").CombinedOutput(); err != nil {
			fmt.Printf("    kube-proxy --cleanup: %v: %s\n", err, lastLine(string(out)))
		}
	}
	problems = append(problems, removeChains()...)
	if e.before != nil {
		problems = append(problems, removeEmptyTables(e.before["nft"])...)
	}
	problems = append(problems, deleteBridge()...)
	if e.before != nil {
		problems = append(problems, restoreSysctls(e.before["sysctls"])...)
	}
	if err := removeWork(e.p); err != nil {
		problems = append(problems, err.Error())
	}
	if e.before != nil {
		problems = append(problems, removeHostPaths(e.p, e.before["paths"])...)
		left := diff(e.before, snapshot(e.p.work))
		if len(left) == 0 {
			fmt.Println("    the host is as before: processes, mounts, cgroups, network namespaces, iptables/ip6tables/nft rules, links, routes, addresses, sysctls, paths")
		}
		problems = append(problems, left...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("left on the host:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// downOnly tears down after a run that died, from what it saved in the
// work directory.
func (e *e2e) downOnly() error {
	if b, err := os.ReadFile(e.p.at("host-before.json")); err == nil {
		_ = json.Unmarshal(b, &e.before)
	} else {
		fmt.Println("no listing from before the run: cleaning without the comparison or the sysctls")
	}
	if e.node == "" {
		e.node = os.Getenv("E2E_NODE_BIN")
	}
	err := e.cleanHost()
	if err == nil {
		_ = os.Remove(e.p.at("host-before.json"))
		fmt.Println("e2e down: done")
	}
	return err
}

func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(s)
}

func lastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

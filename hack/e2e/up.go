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
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// The node's bring-up, step by step (run's first steps): the host checked
// and the node's files written, the bridge, then each program of the node
// started and waited for.

// preflight refuses to start over what an earlier run left.
func (e *e2e) preflight() error {
	var left []string
	if procs := ourProcesses(e.p.work); len(procs) > 0 {
		left = append(left, procs...)
	}
	if exec.Command("ip", "link", "show", bridgeName).Run() == nil {
		left = append(left, "the link "+bridgeName)
	}
	if len(kubepodsCgroups()) > 0 {
		left = append(left, "kubepods cgroups")
	}
	for _, tool := range []string{"iptables-save", "ip6tables-save"} {
		if chainRemoval(run(tool)) != "" {
			left = append(left, tool+" lists KUBE-/CNI- chains")
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("the machine holds what an earlier node left (run 'make e2e-down'):\n  %s", strings.Join(left, "\n  "))
	}
	for _, d := range []string{e.controlPlane, e.node} {
		if d == "" {
			return errors.New("--control-plane and --node are required (run 'make e2e')")
		}
	}
	if err := removeWork(e.p); err != nil {
		return err
	}
	if err := os.MkdirAll(e.p.logs(), 0o755); err != nil {
		return err
	}
	// Earlier runs' logs go; this run's are appended to fresh files.
	old, _ := filepath.Glob(filepath.Join(e.p.logs(), "*.log"))
	for _, f := range append(old, filepath.Join(e.p.logs(), "pods")) {
		_ = os.RemoveAll(f)
	}
	e.before = snapshot(e.p.work)
	b, _ := json.MarshalIndent(e.before, "", " ")
	return os.WriteFile(e.p.at("host-before.json"), b, 0o600)
}

func (e *e2e) configure() error {
	if err := makePKI(e.p); err != nil {
		return err
	}
	if err := writeConfigs(e.p); err != nil {
		return err
	}
	fmt.Println("    " + describeNetwork())
	return nil
}

// bridge makes cni0 with the host's address on the pod network before
// anything listens on that address; the bridge CNI plugin adds the pods'
// veths to it.
func (e *e2e) bridge() error {
	for _, args := range [][]string{
		{"link", "add", bridgeName, "type", "bridge"},
		{"addr", "add", hostIP + "/24", "dev", bridgeName},
		{"link", "set", bridgeName, "up"},
		{"route", "add", serviceCIDR, "dev", bridgeName, "src", hostIP},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// start runs a program of the node and remembers it for the tear-down.
func (e *e2e) start(name, bin string, args []string) (*local.Process, error) {
	pr, err := startProc(e.p, name, bin, args)
	if err != nil {
		return nil, err
	}
	e.procs[name] = pr
	e.order = append(e.order, name)
	return pr, nil
}

// waitHTTP polls url until it answers 200 (TLS unverified: these are the
// components' own health endpoints on loopback), failing early when the
// program exits.
func waitHTTP(ctx context.Context, pr *local.Process, url string, timeout time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback health checks of programs this run started
	return poll.Until(ctx, pr.Name, pollEvery, timeout, func() (bool, error) {
		if pr.Exited() {
			return false, exitError(pr)
		}
		resp, err := hc.Get(url)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("%s answered %d", url, resp.StatusCode)
		}
		return true, nil
	})
}

func (e *e2e) controlPlaneUp(ctx context.Context) error {
	addrs, err := local.FreePorts("127.0.0.1", 2)
	if err != nil {
		return err
	}
	etcdURL, peerURL := "http://"+addrs[0], "http://"+addrs[1]
	etcd, err := e.start("etcd", filepath.Join(e.controlPlane, "etcd"), []string{
		"--name=e2e", "--data-dir=" + e.p.at("etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=e2e=" + peerURL,
		// A throwaway cluster: its data need not survive a power cut.
		"--unsafe-no-fsync=true",
	})
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, etcd, etcdURL+"/health", time.Minute); err != nil {
		return err
	}
	api, err := e.start("kube-apiserver", filepath.Join(e.controlPlane, "kube-apiserver"), apiserverArgs(e.p, etcdURL))
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, api, "https://"+net.JoinHostPort(hostIP, apiserverPort)+"/readyz", 3*time.Minute); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", e.p.kubeconfig("admin"))
	if err != nil {
		return err
	}
	e.c, err = client.New(cfg, client.Options{Scheme: setup.Scheme()})
	return err
}

func (e *e2e) controllersUp(ctx context.Context) error {
	kcm, err := e.start("kube-controller-manager", filepath.Join(e.node, "kube-controller-manager"), controllerManagerArgs(e.p))
	if err != nil {
		return err
	}
	sched, err := e.start("kube-scheduler", filepath.Join(e.node, "kube-scheduler"), schedulerArgs(e.p))
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, kcm, "https://127.0.0.1:10257/healthz", 2*time.Minute); err != nil {
		return err
	}
	return waitHTTP(ctx, sched, "https://127.0.0.1:10259/healthz", 2*time.Minute)
}

func (e *e2e) containerdUp(ctx context.Context) error {
	ctrd, err := e.start("containerd", "containerd", []string{"--config", e.p.at("containerd", "config.toml")})
	if err != nil {
		return err
	}
	if err := poll.Until(ctx, "containerd", pollEvery, time.Minute, func() (bool, error) {
		if ctrd.Exited() {
			return false, exitError(ctrd)
		}
		_, err := e.ctr("version")
		return err == nil, err
	}); err != nil {
		return err
	}
	return e.importImages()
}

// importImages imports the pause image and Switchboard's images into
// containerd's k8s.io namespace, where kubelet finds them.
func (e *e2e) importImages() error {
	tars, _ := filepath.Glob(filepath.Join(e.release, "images", "*.tar"))
	if len(tars) == 0 {
		return fmt.Errorf("no image tarballs in %s/images (run 'make release')", e.release)
	}
	previous, _ := filepath.Glob(filepath.Join(e.previous, "images", "*.tar"))
	if len(previous) == 0 {
		return fmt.Errorf("no image tarballs in %s/images (hack/e2e/previous-release.sh)", e.previous)
	}
	tars = append(tars, previous...)
	for _, tar := range append([]string{e.pause}, tars...) {
		out, err := e.ctr("-n", "k8s.io", "images", "import", tar)
		if err != nil {
			return err
		}
		fmt.Printf("    %s: %s\n", filepath.Base(tar), strings.TrimSpace(out))
	}
	out, err := e.ctr("-n", "k8s.io", "images", "ls", "-q")
	if err != nil {
		return err
	}
	var names []string
	for _, n := range strings.Fields(out) {
		if !strings.HasPrefix(n, "sha256:") {
			names = append(names, n)
		}
	}
	fmt.Printf("    images: %s\n", strings.Join(names, " "))
	return nil
}

func (e *e2e) nodeUp(ctx context.Context) error {
	kubelet, err := e.start("kubelet", filepath.Join(e.node, "kubelet"), kubeletArgs(e.p))
	if err != nil {
		return err
	}
	proxy, err := e.start("kube-proxy", filepath.Join(e.node, "kube-proxy"), []string{"--config=" + e.p.at("kube-proxy.yaml"), "--v=1"})
	if err != nil {
		return err
	}
	// kube-proxy is proven by the smoke check, which reaches a ClusterIP.
	return poll.Until(ctx, "node "+nodeName+" Ready", pollEvery, 3*time.Minute, func() (bool, error) {
		for _, pr := range []*local.Process{kubelet, proxy} {
			if pr.Exited() {
				return false, exitError(pr)
			}
		}
		return e.nodeReady(ctx)
	})
}

// nodeReady reads the node's Ready condition: true, or why not.
func (e *e2e) nodeReady(ctx context.Context) (bool, error) {
	var n corev1.Node
	if err := e.c.Get(ctx, client.ObjectKey{Name: nodeName}, &n); err != nil {
		return false, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return true, nil
			}
			return false, fmt.Errorf("condition Ready=%s: %s", c.Status, c.Message)
		}
	}
	return false, errors.New("no Ready condition yet")
}

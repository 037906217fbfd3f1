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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

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
				pr.Stop(15 * time.Second)
			}
		}
		if err := e.deletePods(ctx); err != nil {
			fmt.Printf("    pods not all gone through kubelet (%v); killing what is left\n", err)
		}
	}
	if e.registry != nil {
		if err := e.registry.Close(); err != nil {
			fmt.Printf("    the loopback registry: %v\n", err)
		}
	}
	for _, n := range []string{"kube-proxy", "kubelet", "containerd"} {
		if pr := e.procs[n]; pr != nil {
			pr.Stop(20 * time.Second)
		}
	}
	for i := len(e.order) - 1; i >= 0; i-- {
		e.procs[e.order[i]].Stop(15 * time.Second)
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
	return !pr.Exited()
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
	return poll.Until(ctx, "pods deleted", pollEvery, 90*time.Second, func() (bool, error) {
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

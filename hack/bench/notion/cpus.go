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

package notion

import (
	"fmt"
	"os"
	"slices"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
)

// cpuSplit is where the routes table's processes run, said, the control
// plane's processes, and undo, which puts them back on every CPU.
type cpuSplit struct {
	said  string
	plane []int
	undo  func()
}

// controlPlane are the command names of envtest's processes, children of
// the bench.
var controlPlane = []string{"kube-apiserver", "etcd"}

// splitCPUs runs the control plane (kube-apiserver and etcd, this
// process's children) on the first half of the CPUs, and this process
// (the clients of every row) and the webhook (hook) on the other half, as
// a cluster runs its control plane and its workers on nodes of their own;
// on one CPU they share it.
func splitCPUs(hook int) (cpuSplit, error) {
	cpus, err := local.CPUs()
	if err != nil {
		return cpuSplit{}, err
	}
	plane, err := local.Children(os.Getpid(), controlPlane...)
	if err != nil {
		return cpuSplit{}, err
	}
	if len(plane) != len(controlPlane) {
		return cpuSplit{}, fmt.Errorf("found %d of the control plane's %d processes (%v) among the bench's children", len(plane), len(controlPlane), controlPlane)
	}
	if len(cpus) < 2 {
		return cpuSplit{said: "one, shared by the control plane and the clients", plane: plane, undo: func() {}}, nil
	}
	half := len(cpus) / 2
	clients := []int{os.Getpid(), hook}
	undo := func() {
		for _, pid := range slices.Concat(plane, clients) {
			_ = local.Pin(pid, cpus) // a process that has ended needs none
		}
	}
	for _, g := range []struct {
		pids []int
		cpus []int
	}{{plane, cpus[:half]}, {clients, cpus[half:]}} {
		for _, pid := range g.pids {
			if err := local.Pin(pid, g.cpus); err != nil {
				undo()
				return cpuSplit{}, err
			}
		}
	}
	return cpuSplit{
		plane: plane,
		said:  fmt.Sprintf("kube-apiserver and etcd on %v, the bench (every row's client) and bin/webhook on %v, as a cluster's control plane and its workers", cpus[:half], cpus[half:]),
		undo:  undo,
	}, nil
}

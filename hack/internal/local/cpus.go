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

package local

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CPUs are the CPUs this process may run on.
func CPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// Pin keeps every thread of the process pid on cpus, and the threads it
// starts after (a thread inherits its creator's CPUs).
func Pin(pid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	// Twice over the threads: one started while the first pass ran, from
	// a thread not yet pinned, is pinned by the second.
	for range 2 {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH { // ESRCH: the thread has ended
				return fmt.Errorf("pin thread %d of %d: %w", tid, pid, err)
			}
		}
	}
	return nil
}

// Children are the processes whose parent is pid and whose command name
// is one of names.
func Children(pid int, names ...string) ([]int, error) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, p := range procs {
		child, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		f, err := StatFields(child) // state, ppid, …
		if err != nil || len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", child))
		if err == nil && slices.Contains(names, strings.TrimSuffix(string(comm), "\n")) {
			out = append(out, child)
		}
	}
	return out, nil
}

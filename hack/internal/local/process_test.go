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
	"os"
	"testing"
	"time"
)

// A busy process's CPU time grows, and the machine's busy time grows by
// at least as much: what the Notion routes table divides by its requests.
func TestCPUTimesGrowWithABusyProcess(t *testing.T) {
	logf, err := os.CreateTemp(t.TempDir(), "busy")
	if err != nil {
		t.Fatal(err)
	}
	machine0 := MachineBusy()
	p, err := Run("busy", "sh", logf, "-c", "while :; do :; done")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	if machine0 < 0 {
		t.Fatal("/proc/stat could not be read")
	}
	deadline := time.Now().Add(time.Minute)
	for p.CPUTime() < 200*time.Millisecond {
		if p.CPUTime() < 0 {
			t.Fatal("/proc/PID/stat could not be read")
		}
		if time.Now().After(deadline) {
			t.Fatalf("a busy loop used %v of CPU in a minute", p.CPUTime())
		}
		time.Sleep(10 * time.Millisecond)
	}
	used := p.CPUTime()
	// The kernel counts the machine's time by ticks and a task's from its
	// exact run time: they may differ by a few ticks, never by more.
	const ticks = 50 * time.Millisecond
	if grew := MachineBusy() - machine0; grew+ticks < used {
		t.Fatalf("the machine's busy time grew by %v, less than the busy process's own %v", grew, used)
	}
}

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
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// startProc starts one program of the node (local.Run) with its output
// appended to logs/<name>.log. Its PID is appended to the work
// directory's pids file, so that `e2e down` can stop it after the run
// that started it died.
func startProc(p paths, name, bin string, args []string) (*local.Process, error) {
	logf, err := os.OpenFile(filepath.Join(p.logs(), name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	pr, err := local.Run(name, bin, logf, args...)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p.pidFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, _ = fmt.Fprintf(f, "%d %s\n", pr.Pid(), name)
		_ = f.Close()
	}
	return pr, nil
}

// exitError says that the program ended, how, and where its log is.
func exitError(pr *local.Process) error {
	how := "exit 0"
	if err := pr.Err(); err != nil {
		how = err.Error()
	}
	return fmt.Errorf("%s %w (%s): see logs/%s.log", pr.Name, errExited, how, pr.Name)
}

// stopRecorded stops the programs the pids file lists that are still
// running, newest first: a PID counts only while its command line names
// the work directory, so a PID reused by someone else's process is left
// alone.
func stopRecorded(p paths) {
	f, err := os.Open(p.pidFile())
	if err != nil {
		return
	}
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.Fields(sc.Text() + " x")[0]); err == nil {
			pids = append(pids, pid)
		}
	}
	_ = f.Close()
	for i := len(pids) - 1; i >= 0; i-- {
		if ours(p, pids[i]) {
			_ = syscall.Kill(pids[i], syscall.SIGTERM)
			waitGone(p, pids[i], 15*time.Second)
		}
	}
}

// ours reports whether pid is running with the work directory in its
// command line.
func ours(p paths, pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(b), p.work)
}

func waitGone(p paths, pid int, grace time.Duration) {
	if poll.Until(context.Background(), "", 100*time.Millisecond, grace, func() (bool, error) { return !ours(p, pid), nil }) != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		time.Sleep(200 * time.Millisecond)
	}
}

// killLeftovers kills, with SIGKILL, what the node left running: the
// containerd shims (their command lines name containerd's socket in the
// work directory) and every process in a kubepods cgroup (the pods').
func killLeftovers(p paths) []string {
	var killed []string
	for _, l := range ourProcesses(p.work) {
		pid, err := strconv.Atoi(strings.Fields(l)[0])
		if err != nil {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, l)
		}
	}
	if len(killed) > 0 {
		_ = poll.Until(context.Background(), "", 100*time.Millisecond, 10*time.Second, func() (bool, error) {
			return len(ourProcesses(p.work)) == 0, nil
		})
	}
	return killed
}

// Errors that waiting cannot mend: poll.Until ends the wait at once.
var (
	// errExited says a program ended before it was ready.
	errExited = poll.Stop(errors.New("exited"))
	// errFailed says what was waited for reached a final state other
	// than the one wanted.
	errFailed = poll.Stop(errors.New("failed"))
)

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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one program of the node, started in its own process group with
// its output in logs/<name>.log. Its PID is appended to the work
// directory's pids file, so that `e2e down` can stop it after the run
// that started it died.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func startProc(p paths, name, bin string, args []string) (*proc, error) {
	logf, err := os.OpenFile(filepath.Join(p.logs(), name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	_ = logf.Close()
	pr := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { pr.err = cmd.Wait(); close(pr.done) }()
	f, err := os.OpenFile(p.pidFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, _ = fmt.Fprintf(f, "%d %s\n", cmd.Process.Pid, name)
		_ = f.Close()
	}
	return pr, nil
}

// exited reports whether the program has ended.
func (pr *proc) exited() bool {
	select {
	case <-pr.done:
		return true
	default:
		return false
	}
}

// exitError says that the program ended, how, and where its log is.
func (pr *proc) exitError() error {
	how := "exit 0"
	if pr.err != nil {
		how = pr.err.Error()
	}
	return fmt.Errorf("%s %w (%s): see logs/%s.log", pr.name, errExited, how, pr.name)
}

// stop sends SIGTERM to the process group and SIGKILL after grace.
func (pr *proc) stop(grace time.Duration) {
	if pr.exited() {
		return
	}
	_ = syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-pr.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pr.cmd.Process.Pid, syscall.SIGKILL)
		<-pr.done
	}
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
	deadline := time.Now().Add(grace)
	for ours(p, pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			time.Sleep(200 * time.Millisecond)
			return
		}
		time.Sleep(100 * time.Millisecond)
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
		deadline := time.Now().Add(10 * time.Second)
		for len(ourProcesses(p.work)) > 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	}
	return killed
}

var (
	// errExited says a program ended before it was ready.
	errExited = errors.New("exited")
	// errFailed says what was waited for reached a final state other
	// than the one wanted.
	errFailed = errors.New("failed")
)

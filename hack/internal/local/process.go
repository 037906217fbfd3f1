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
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a program started in its own process group, its output in a
// log file.
type Process struct {
	Name string
	// Log is the path of the log file.
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start runs bin/name with args, logging to dir/name.log (made anew), in
// this process's environment plus environ ("KEY=value"; may be nil).
func Start(bin, dir, name string, environ []string, args ...string) (*Process, error) {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	return run(name, filepath.Join(bin, name), logf, environ, args...)
}

// Run runs the program at path (or found in PATH) as name, with args, its
// output going to logf, which Run closes (the program has its own copy).
func Run(name, path string, logf *os.File, args ...string) (*Process, error) {
	return run(name, path, logf, nil, args...)
}

func run(name, path string, logf *os.File, environ []string, args ...string) (*Process, error) {
	defer logf.Close()
	cmd := exec.Command(path, args...)
	if environ != nil {
		cmd.Env = append(os.Environ(), environ...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, Log: logf.Name(), cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process's id, which is also its process group's.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the program has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is how the program ended (nil for exit 0), once Exited.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Stop sends SIGTERM to the process group, and SIGKILL after grace.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		<-p.done
	}
}

// PeakRSS is the process's high-water resident set size (VmHWM), in bytes;
// -1 when it cannot be read.
func (p *Process) PeakRSS() int64 { return p.statusKB("VmHWM:") }

// RSS is the process's resident set size now (VmRSS), in bytes; -1 when it
// cannot be read.
func (p *Process) RSS() int64 { return p.statusKB("VmRSS:") }

// RSSFile is the part of the resident set that maps files (RssFile): the
// binary's own code and data as the kernel pages them in, which a Go
// runtime's soft memory limit does not count and the kernel may reclaim.
// The rest (RssAnon, RSSAnon) is the memory the process allocated.
func (p *Process) RSSFile() int64 { return p.statusKB("RssFile:") }

// RSSAnon is the anonymous part of the resident set (RssAnon): the heap,
// stacks and runtime structures, which the soft memory limit governs.
func (p *Process) RSSAnon() int64 { return p.statusKB("RssAnon:") }

// statusKB reads the field (a size in kB) of /proc/PID/status, in bytes.
func (p *Process) statusKB(field string) int64 {
	v, ok := StatusField(p.Pid(), field)
	if !ok {
		return -1
	}
	kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil {
		return -1
	}
	return kb << 10
}

// StatusField is the value of the field of /proc/PID/status named with
// its colon ("VmRSS:"), spaces trimmed; false when it cannot be read.
func StatusField(pid int, field string) (string, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

// userHZ is the unit of the CPU times in /proc (USER_HZ, which the kernel
// fixes at 100 on every architecture Go runs on Linux).
const userHZ = 100

// StatFields are the fields of /proc/PID/stat after the command name,
// which may hold spaces, in parentheses: the state first, then the
// parent's pid (proc(5) numbers them from 3).
func StatFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat names no command", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// CPUTime is the CPU time the process has used (CPUTimeOf).
func (p *Process) CPUTime() time.Duration { return CPUTimeOf(p.Pid()) }

// CPUTimeOf is the CPU time process pid has used, user and system
// (/proc/PID/stat), to 1/100 s; -1 when it cannot be read.
func CPUTimeOf(pid int) time.Duration {
	// utime and stime are the 12th and 13th fields after the command.
	f, err := StatFields(pid)
	if err != nil || len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(ut+st) * time.Second / userHZ
}

// MachineBusy is the CPU time every core of the machine has spent busy
// since boot (/proc/stat: every state but idle, iowait and steal), to 1/100 s;
// -1 when it cannot be read. Over an interval it is what every process
// used together.
func MachineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return -1
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return -1
		}
		// user nice system idle iowait irq softirq steal guest
		// guest_nice: steal is another guest's, guest is in user already.
		if i != 3 && i != 4 && i < 7 {
			busy += n
		}
	}
	return time.Duration(busy) * time.Second / userHZ
}

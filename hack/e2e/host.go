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
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
)

// hostState is what the node can change on the machine, listed so that a
// run can prove it left the machine as it found it: take one before the
// node starts and one after the tear-down, and compare.
//
// Each category is a set of lines. Processes and cgroups are filtered to
// the node's own (the work directory in the command line; kubepods
// cgroups), because other people's processes come and go on a shared
// machine; the rest is listed whole.
type hostState map[string][]string

// sysctls are the kernel settings the node may change: kubelet sets the
// vm/kernel ones when protectKernelDefaults is off (its default; see
// setupKernelTunables in pkg/kubelet/cm), the bridge CNI plugin turns on
// forwarding when it is a gateway (this node's is not), kube-proxy sets
// route_localnet for localhost NodePorts (turned off here) and the
// conntrack limits (turned off here).
var sysctls = []string{
	"vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
	"kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes",
	"net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding", "net.ipv4.conf.all.route_localnet",
	"net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables",
	"net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_tcp_timeout_established",
	"net.netfilter.nf_conntrack_tcp_timeout_close_wait",
}

// hostPaths are places outside the work directory that containerd, the
// CNI plugins or kubelet write to by default; the node's configuration
// moves each into the work directory, and the check proves it.
var hostPaths = []string{
	"/var/lib/kubelet", "/var/lib/cni", "/run/netns", "/var/run/netns", "/run/containerd",
	"/var/lib/containerd", "/opt/containerd", "/var/log/pods", "/var/log/containers",
	"/etc/cni", "/opt/cni", "/etc/kubernetes", "/var/run/kubernetes", "/run/flannel",
}

var (
	counters = regexp.MustCompile(`\[\d+:\d+\]|counter packets \d+ bytes \d+`)
	expires  = regexp.MustCompile(` expires \d+sec`)
)

// snapshot lists the host's state; work is the node's work directory.
func snapshot(work string) hostState {
	s := hostState{}
	s["processes"] = ourProcesses(work)
	s["mounts"] = mounts()
	s["cgroups"] = cgroups()
	s["netns"] = lines(run("ip", "netns", "list"))
	// Not the legacy tools: listing legacy tables loads their kernel
	// modules, which would change the host being checked.
	for _, tool := range []string{"iptables-save", "ip6tables-save"} {
		if _, err := exec.LookPath(tool); err == nil {
			s[tool] = ruleLines(run(tool))
		}
	}
	if _, err := exec.LookPath("nft"); err == nil {
		s["nft"] = ruleLines(run("nft", "list", "ruleset"))
	}
	var links []string
	for _, l := range lines(run("ip", "-o", "link", "show")) {
		// "3: cni0: <...> mtu ..." → "cni0"
		if f := strings.Fields(l); len(f) > 1 {
			links = append(links, strings.TrimSuffix(strings.SplitN(f[1], "@", 2)[0], ":"))
		}
	}
	s["links"] = links
	for _, l := range append(lines(run("ip", "-4", "route", "show", "table", "all")), lines(run("ip", "-6", "route", "show", "table", "all"))...) {
		s["routes"] = append(s["routes"], expires.ReplaceAllString(l, ""))
	}
	for _, l := range lines(run("ip", "-o", "addr", "show")) {
		// "2: eth0    inet6 fd00::2/64 scope global \       valid_lft …":
		// the interface, family and address; lifetimes tick.
		if f := strings.Fields(l); len(f) > 3 {
			s["addresses"] = append(s["addresses"], strings.Join(f[1:4], " "))
		}
	}
	for _, k := range sysctls {
		v, err := readSysctl(k)
		if err != nil {
			v = "(absent)"
		}
		s["sysctls"] = append(s["sysctls"], k+" = "+v)
	}
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); err == nil {
			s["paths"] = append(s["paths"], p)
		}
	}
	for k := range s {
		sort.Strings(s[k])
	}
	return s
}

// diff lists what after has that before has not ("+") and the reverse
// ("-"), category by category; empty when the two are the same.
func diff(before, after hostState) []string {
	var out []string
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		b, a := set(before[k]), set(after[k])
		for _, l := range after[k] {
			if !b[l] {
				out = append(out, fmt.Sprintf("%s: + %s", k, l))
			}
		}
		for _, l := range before[k] {
			if !a[l] {
				out = append(out, fmt.Sprintf("%s: - %s", k, l))
			}
		}
	}
	return out
}

func set(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

// ourProcesses lists the processes the node started: its programs (each
// has the work directory in its command line) and what runs in its pods
// (in kubepods cgroups).
func ourProcesses(work string) []string {
	var out []string
	mine := ancestors()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || mine[pid] {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		cg, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cgroup"))
		if strings.Contains(cmd, work) || bytes.Contains(cg, []byte("kubepods")) {
			out = append(out, fmt.Sprintf("%d %s", pid, cmd))
		}
	}
	return out
}

// ancestors are this process and those that started it (go run, make, a
// shell), whose command lines may name the work directory too.
func ancestors() map[int]bool {
	m := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !m[pid]; {
		m[pid] = true
		f, err := local.StatFields(pid) // state, ppid, …
		if err != nil || len(f) < 2 {
			break
		}
		pid, _ = strconv.Atoi(f[1])
	}
	return m
}

// mounts lists mount points with their type and source (no IDs, which
// change with every mount).
func mounts() []string {
	var out []string
	for _, l := range lines(readFile("/proc/self/mountinfo")) {
		f := strings.Fields(l)
		sep := -1
		for i, x := range f {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+2 >= len(f) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s", f[4], f[sep+1], f[sep+2]))
	}
	return out
}

// cgroups lists the top-level cgroups of each hierarchy and every cgroup
// kubelet names kubepods, at any depth.
func cgroups() []string {
	var out []string
	roots, _ := os.ReadDir("/sys/fs/cgroup")
	for _, r := range roots {
		root := filepath.Join("/sys/fs/cgroup", r.Name())
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || p == root {
				return nil
			}
			rel, _ := filepath.Rel("/sys/fs/cgroup", p)
			if strings.Count(rel, "/") == 1 || strings.Contains(rel, "kubepods") {
				out = append(out, rel)
			}
			if strings.Count(rel, "/") >= 1 && !strings.Contains(rel, "kubepods") {
				return fs.SkipDir
			}
			return nil
		})
	}
	return out
}

// kubepodsCgroups lists the kubepods cgroup directories, deepest first,
// so that they can be removed in that order.
func kubepodsCgroups() []string {
	var dirs []string
	for _, rel := range cgroups() {
		if strings.Contains(rel, "kubepods") {
			dirs = append(dirs, filepath.Join("/sys/fs/cgroup", rel))
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs
}

// ruleLines keeps firewall rules without their counters or comments.
func ruleLines(out string) []string {
	var keep []string
	for _, l := range lines(out) {
		if strings.HasPrefix(l, "#") {
			continue
		}
		keep = append(keep, counters.ReplaceAllString(l, ""))
	}
	return keep
}

func readSysctl(key string) (string, error) {
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(key, ".", "/"))
	return strings.Join(strings.Fields(string(b)), " "), err
}

func writeSysctl(key, value string) error {
	return os.WriteFile("/proc/sys/"+strings.ReplaceAll(key, ".", "/"), []byte(value), 0o644)
}

// run runs a command and returns its standard output; a failure gives
// what it printed so far (the snapshot lists what it can).
func run(name string, args ...string) string {
	out, _ := exec.Command(name, args...).Output()
	return string(out)
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimRight(sc.Text(), " \t"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

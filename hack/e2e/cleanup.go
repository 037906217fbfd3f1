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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// What cleanHost (teardown.go) removes from the host, piece by piece: the
// mounts, cgroups, iptables chains, nftables tables, the bridge, the
// sysctls and host paths, and the work directory.

// chainPrefixes are the iptables chains kube-proxy (KUBE-*), kubelet
// (KUBE-KUBELET-CANARY) and the CNI plugins (CNI-*) create.
var chainPrefixes = []string{"KUBE-", "CNI-"}

func ourChain(name string) bool {
	for _, p := range chainPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// unmountAll unmounts every mount point under the work directory, deepest
// first (containerd's snapshots and shm, kubelet's volumes, the pods'
// network namespaces), lazily when one is still busy.
func unmountAll(p paths) []string {
	var errs []string
	for range 3 {
		var points []string
		for _, m := range mounts() {
			if pt := strings.Fields(m)[0]; strings.HasPrefix(pt, p.work+"/") {
				points = append(points, pt)
			}
		}
		if len(points) == 0 {
			return nil
		}
		sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
		errs = errs[:0]
		for _, pt := range points {
			if err := syscall.Unmount(pt, 0); err != nil {
				if err := syscall.Unmount(pt, syscall.MNT_DETACH); err != nil {
					errs = append(errs, fmt.Sprintf("umount %s: %v", pt, err))
				}
			}
		}
	}
	return errs
}

// removeCgroups removes the kubepods cgroups kubelet and runc made, in
// every hierarchy, deepest first (a cgroup with processes or children
// cannot be removed: the processes are killed before).
func removeCgroups() []string {
	var errs []string
	for _, d := range kubepodsCgroups() {
		if err := syscall.Rmdir(d); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Sprintf("rmdir %s: %v", d, err))
		}
	}
	return errs
}

// removeChains deletes the chains chainPrefixes name from every table
// of iptables and ip6tables, and the rules of other chains that jump to
// them, in one iptables-restore transaction per family. kube-proxy
// --cleanup does the same for its own chains first; this also takes
// kubelet's canaries and anything a killed kube-proxy left.
func removeChains() []string {
	var errs []string
	for _, fam := range [][2]string{{"iptables-save", "iptables-restore"}, {"ip6tables-save", "ip6tables-restore"}} {
		if _, err := exec.LookPath(fam[0]); err != nil {
			continue
		}
		script := chainRemoval(run(fam[0]))
		if script == "" {
			continue
		}
		cmd := exec.Command(fam[1], "--noflush")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v: %s", fam[1], err, out))
		}
	}
	return errs
}

// chainRemoval turns iptables-save output into the iptables-restore
// input that removes our chains: first the jumps to them from other
// chains, then their rules, then the chains. Empty when there are none.
func chainRemoval(save string) string {
	var b strings.Builder
	var table string
	var deletes, chains []string
	flush := func() {
		if table != "" && len(chains) > 0 {
			fmt.Fprintf(&b, "*%s\n", table)
			for _, d := range deletes {
				b.WriteString(d + "\n")
			}
			for _, c := range chains {
				fmt.Fprintf(&b, "-F %s\n", c)
			}
			for _, c := range chains {
				fmt.Fprintf(&b, "-X %s\n", c)
			}
			b.WriteString("COMMIT\n")
		}
		deletes, chains = nil, nil
	}
	for _, l := range lines(save) {
		switch {
		case strings.HasPrefix(l, "*"):
			flush()
			table = strings.TrimPrefix(l, "*")
		case strings.HasPrefix(l, ":"):
			if name := strings.Fields(l[1:])[0]; ourChain(name) {
				chains = append(chains, name)
			}
		case strings.HasPrefix(l, "-A "):
			f := strings.Fields(l)
			if len(f) < 2 || ourChain(f[1]) {
				continue // flushed with its chain
			}
			for i, x := range f {
				if (x == "-j" || x == "-g") && i+1 < len(f) && ourChain(f[i+1]) {
					deletes = append(deletes, "-D "+strings.TrimPrefix(l, "-A "))
					break
				}
			}
		case l == "COMMIT":
			flush()
			table = ""
		}
	}
	flush()
	return b.String()
}

// removeEmptyTables deletes the nftables tables that were not there
// before and hold no rule: iptables-nft makes the nat, filter and mangle
// tables (with their built-in chains) when kube-proxy first adds a rule,
// and removing the rules leaves them. A table with a rule left is kept,
// and the comparison reports it.
func removeEmptyTables(before []string) []string {
	if _, err := exec.LookPath("nft"); err != nil {
		return nil
	}
	had := set(before)
	var errs []string
	for _, l := range lines(run("nft", "list", "tables")) {
		f := strings.Fields(l) // "table ip nat"
		if len(f) != 3 || had[l+" {"] {
			continue
		}
		if !emptyTable(run("nft", "list", "table", f[1], f[2])) {
			continue
		}
		if out, err := exec.Command("nft", "delete", "table", f[1], f[2]).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Sprintf("nft delete table %s %s: %v: %s", f[1], f[2], err, out))
		}
	}
	return errs
}

// emptyTable reports whether an `nft list table` listing has chains but
// no rule in them.
func emptyTable(listing string) bool {
	for _, l := range lines(listing) {
		l = strings.TrimSpace(l)
		switch {
		case l == "}", strings.HasPrefix(l, "table "), strings.HasPrefix(l, "chain "),
			strings.HasPrefix(l, "type ") && strings.Contains(l, " hook "), strings.HasPrefix(l, "policy "):
		default:
			return false
		}
	}
	return true
}

// deleteBridge deletes cni0 and every veth still attached to it (the
// routes on them go too).
func deleteBridge() []string {
	var errs []string
	out, _ := exec.Command("ip", "-j", "link", "show", "master", bridgeName).Output()
	var ports []struct {
		Name string `json:"ifname"`
	}
	_ = json.Unmarshal(out, &ports)
	for _, l := range ports {
		_ = exec.Command("ip", "link", "delete", l.Name).Run()
	}
	if err := exec.Command("ip", "link", "show", bridgeName).Run(); err == nil {
		if out, err := exec.Command("ip", "link", "delete", bridgeName).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Sprintf("ip link delete %s: %v: %s", bridgeName, err, out))
		}
	}
	return errs
}

// restoreSysctls puts back the values before holds ("key = value" lines
// of a snapshot's sysctls).
func restoreSysctls(before []string) []string {
	var errs []string
	for _, l := range before {
		k, v, ok := strings.Cut(l, " = ")
		if !ok || v == "(absent)" {
			continue
		}
		if cur, err := readSysctl(k); err == nil && cur != v {
			if err := writeSysctl(k, v); err != nil {
				errs = append(errs, fmt.Sprintf("sysctl %s=%s: %v", k, v, err))
			} else {
				fmt.Printf("    restored %s = %s (was %s)\n", k, v, cur)
			}
		}
	}
	return errs
}

// removeHostPaths removes the default host paths (hostPaths) that did
// not exist before the run, when they hold nothing but what the node's
// programs put there whatever their configuration (ours, below).
func removeHostPaths(p paths, before []string) []string {
	var errs []string
	had := set(before)
	for _, hp := range hostPaths {
		if had[hp] {
			continue
		}
		if _, err := os.Lstat(hp); err != nil {
			continue
		}
		if err := removeOurTree(p, hp); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return errs
}

// ours reports whether a file outside the work directory is one the
// node's programs make in a fixed place:
//   - sockets: kubelet's device plugin socket in
//     /var/lib/kubelet/device-plugins whatever its --root-dir (a constant
//     of the device plugin API);
//   - links into the work directory: kubelet's /var/log/containers
//     links to the pods' logs (a constant too; the logs themselves are in
//     podLogsDir);
//   - the CNI result cache of this node's network and of the loopback
//     network, /var/lib/cni/results (libcni's default, which containerd
//     1.6 does not let us move): the CNI DEL of a pod removes its entries,
//     a killed run leaves them.
func ourFile(p paths, path string, info os.FileInfo) bool {
	switch {
	case info.Mode()&os.ModeSocket != 0:
		return true
	case info.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(path)
		return err == nil && strings.HasPrefix(target, p.work+"/")
	case filepath.Dir(path) == "/var/lib/cni/results":
		name := filepath.Base(path)
		return strings.HasPrefix(name, "switchboard-e2e-") || strings.HasPrefix(name, "cni-loopback-")
	}
	return false
}

// removeOurTree removes dir, its subdirectories and the files ourFile
// recognizes, when nothing else is in them.
func removeOurTree(p paths, dir string) error {
	var dirs, ourFiles, files []string
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		switch {
		case err != nil:
		case info.IsDir():
			dirs = append(dirs, path)
		case ourFile(p, path, info):
			ourFiles = append(ourFiles, path)
		default:
			files = append(files, path)
		}
		return nil
	})
	if len(files) > 0 {
		return fmt.Errorf("%s was made during the run and still holds %s", dir, strings.Join(files, ", "))
	}
	for _, f := range ourFiles {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if err := os.Remove(d); err != nil {
			return err
		}
	}
	return nil
}

// removeWork deletes the work directory but its logs, once nothing is
// mounted in it.
func removeWork(p paths) error {
	entries, err := os.ReadDir(p.work)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, e := range entries {
		if e.Name() == "logs" || e.Name() == "host-before.json" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(p.work, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

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
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// The node's network. Everything lives on the bridge the run creates
// (cni0) and in the network namespaces of its pods: the API server, the
// sandbox and versitygw listen on the bridge's address, which pods reach
// as their gateway without IP forwarding; the Service range is routed to
// the bridge too, so that a ClusterIP kube-proxy has not programmed yet
// never leaves the machine. Nothing listens on the host's own interfaces.
const (
	nodeName    = "switchboard-e2e"
	bridgeName  = "cni0"
	hostIP      = "10.244.0.1"
	podCIDR     = "10.244.0.0/24"
	serviceCIDR = "10.96.0.0/24"
	// kubernetesSvcIP is the first address of serviceCIDR: the
	// `kubernetes` Service.
	kubernetesSvcIP = "10.96.0.1"
	apiserverPort   = "6443"
	// pauseImage is the sandbox image (hack/e2e/pause-image.sh names it).
	pauseImage = "localhost/switchboard-e2e/pause:1"
)

// paths are the files and directories of one run under the work
// directory. Unix socket paths must stay under 108 bytes, so the names
// are short.
type paths struct{ work string }

func (p paths) at(elem ...string) string { return filepath.Join(append([]string{p.work}, elem...)...) }
func (p paths) logs() string             { return p.at("logs") }
func (p paths) pki() string              { return p.at("pki") }
func (p paths) kubeconfig(who string) string {
	return p.at("kubeconfig", who)
}
func (p paths) containerdSock() string { return p.at("containerd", "c.sock") }
func (p paths) pidFile() string        { return p.at("pids") }

// containerdConfig is containerd's own configuration: its root, state,
// socket and the runc state in the work directory, runc with cgroupfs
// (SystemdCgroup = false: there is no systemd), restrict_oom_score_adj
// (the machines refuse a negative oom_score_adj, which kubelet asks for
// its guaranteed pods), pod network namespaces under its state directory
// instead of /run/netns, and the locally built pause image as the sandbox.
// Plugins that would touch the host elsewhere (other snapshotters,
// tracing) are off.
func containerdConfig(p paths) string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

# containerd 1.6's task service needs the v1 runtime loaded; its runc
# state goes to the work directory too (default /run/containerd/runc).
[plugins."io.containerd.runtime.v1.linux"]
  runtime_root = %[9]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = %[7]q
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[8]q
    max_conf_num = 1
`, p.at("containerd", "root"), p.at("containerd", "state"), p.containerdSock(), p.at("containerd", "t.sock"),
		p.at("containerd", "opt"), pauseImage, p.at("containerd", "runc"), p.at("cni", "net.d"), p.at("containerd", "runc-v1"))
}

// cniConfig is the pod network: the bridge plugin on cni0 with host-local
// addresses from podCIDR (its state in the work directory). isGateway is
// off and the run gives the bridge its address itself: a gateway bridge
// makes the plugin turn on IP forwarding for the whole host, and pods
// here only talk to each other and to the host. ipMasq is off for the
// same reason (no traffic leaves the machine, so no NAT rules).
func cniConfig(p paths) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "switchboard-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[1]q,
      "isGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %[2]q,
        "ranges": [[{"subnet": %[3]q, "rangeStart": "10.244.0.10", "gateway": %[4]q}]],
        "routes": [{"dst": "0.0.0.0/0", "gw": %[4]q}]
      }
    }
  ]
}
`, bridgeName, p.at("cni", "ipam"), podCIDR, hostIP)
}

// kubeletConfig is kubelet's configuration for these machines:
//   - failCgroupV1: false — the machines run cgroup v1 (hybrid), which
//     kubelet 1.35+ refuses by default (KEP-5573);
//   - cgroupDriver: cgroupfs — no systemd;
//   - the image garbage collector off (thresholds at 100 %): the images
//     were imported by hand and cannot be pulled again;
//   - eviction only at the brink, so that a busy shared disk does not
//     evict the pods under test;
//   - its API (10250) on the bridge address, x509 clients of the node's
//     CA only; the read-only port off;
//   - pods get a resolv.conf naming only loopback: there is no cluster
//     DNS, every address the pods use is an IP, and a lookup must fail at
//     once rather than reach the machine's resolver.
func kubeletConfig(p paths) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://%[1]s
imageServiceEndpoint: unix://%[1]s
address: %[2]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: %[3]s
tlsPrivateKeyFile: %[4]s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: false
  x509:
    clientCAFile: %[5]s
authorization:
  mode: AlwaysAllow
clusterDomain: cluster.local
resolvConf: %[6]s
podLogsDir: %[7]s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
registerNode: true
rotateCertificates: false
serverTLSBootstrap: false
`, p.containerdSock(), hostIP, filepath.Join(p.pki(), "kubelet-serving.crt"), filepath.Join(p.pki(), "kubelet-serving.key"),
		filepath.Join(p.pki(), "ca.crt"), p.at("resolv.conf"), p.at("pod-logs"))
}

// kubeProxyConfig is kube-proxy in iptables mode, touching no sysctl:
// the conntrack settings are zero (leave the kernel's), localhost
// NodePorts are off (they need route_localnet), and NodePorts listen on
// the bridge address only.
func kubeProxyConfig(p paths) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: %[1]s
clientConnection:
  kubeconfig: %[2]s
clusterCIDR: %[3]s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses:
  - %[4]s/32
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
  masqueradeAll: false
`, nodeName, p.kubeconfig("kube-proxy"), podCIDR, hostIP)
}

// writeConfigs writes every configuration file of the node.
func writeConfigs(p paths) error {
	files := map[string]string{
		p.at("containerd", "config.toml"):                   containerdConfig(p),
		p.at("cni", "net.d", "10-switchboard-e2e.conflist"): cniConfig(p),
		p.at("kubelet.yaml"):                                kubeletConfig(p),
		p.at("kube-proxy.yaml"):                             kubeProxyConfig(p),
		p.at("resolv.conf"):                                 "nameserver 127.0.0.1\n",
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, d := range []string{p.at("kubelet"), p.at("pod-logs"), p.at("etcd"), p.at("cni", "ipam")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// makePKI makes the CA, the serving and client certificates and the
// kubeconfigs of every component (one user each, as kubeadm does).
func makePKI(p paths) error {
	ca, err := newPKI(p.pki())
	if err != nil {
		return err
	}
	server := "https://" + net.JoinHostPort(hostIP, apiserverPort)
	certs := []certificate{
		{name: "apiserver", cn: "kube-apiserver", server: true,
			dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
			ips: []net.IP{net.ParseIP(hostIP), net.ParseIP(kubernetesSvcIP), net.ParseIP("127.0.0.1")}},
		{name: "kubelet-serving", cn: nodeName, server: true, dns: []string{nodeName}, ips: []net.IP{net.ParseIP(hostIP)}},
		{name: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client"},
		{name: "admin", cn: "switchboard-e2e-admin", orgs: []string{"system:masters"}},
		{name: "kube-controller-manager", cn: "system:kube-controller-manager"},
		{name: "kube-scheduler", cn: "system:kube-scheduler"},
		{name: "kubelet", cn: "system:node:" + nodeName, orgs: []string{"system:nodes"}},
		{name: "kube-proxy", cn: "system:kube-proxy"},
	}
	for _, c := range certs {
		if err := ca.issue(c); err != nil {
			return err
		}
	}
	if err := ca.serviceAccountKeys(); err != nil {
		return err
	}
	if err := os.MkdirAll(p.at("kubeconfig"), 0o700); err != nil {
		return err
	}
	for _, who := range []string{"admin", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"} {
		if err := ca.kubeconfig(p.kubeconfig(who), server, who); err != nil {
			return err
		}
	}
	return nil
}

// apiserverArgs starts kube-apiserver the normal way, not envtest's: a
// non-loopback address pods reach through the `kubernetes` Service,
// ServiceAccount tokens (issuer, signing and verifying keys), the
// ServiceAccount admission plugin (on by default) with NodeRestriction,
// and Node,RBAC authorization.
func apiserverArgs(p paths, etcdURL string) []string {
	pk := func(f string) string { return filepath.Join(p.pki(), f) }
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + hostIP,
		"--advertise-address=" + hostIP,
		"--secure-port=" + apiserverPort,
		"--cert-dir=" + p.at("apiserver"),
		"--tls-cert-file=" + pk("apiserver.crt"),
		"--tls-private-key-file=" + pk("apiserver.key"),
		"--client-ca-file=" + pk("ca.crt"),
		"--kubelet-client-certificate=" + pk("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + pk("apiserver-kubelet-client.key"),
		// The node's name resolves nowhere: reach kubelet at its address
		// (kubectl logs, exec).
		"--kubelet-preferred-address-types=InternalIP",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pk("sa.pub"),
		"--service-account-signing-key-file=" + pk("sa.key"),
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=false",
		"--profiling=false",
		"--v=1",
	}
}

func controllerManagerArgs(p paths) []string {
	return componentArgs(p, "kube-controller-manager",
		"--cert-dir="+p.at("kube-controller-manager"),
		// The token controller signs the legacy token Secrets, and the
		// root CA publisher writes kube-root-ca.crt into every namespace
		// (projected ServiceAccount tokens mount it).
		"--service-account-private-key-file="+filepath.Join(p.pki(), "sa.key"),
		"--root-ca-file="+filepath.Join(p.pki(), "ca.crt"),
		// Each controller acts as its own ServiceAccount, as in a real
		// cluster.
		"--use-service-account-credentials=true",
		"--service-cluster-ip-range="+serviceCIDR,
	)
}

func schedulerArgs(p paths) []string { return componentArgs(p, "kube-scheduler") }

// componentArgs are the flags of the control plane component name: its
// kubeconfig for everything, serving on loopback, then extra, then no
// leader election and no profiling.
func componentArgs(p paths, name string, extra ...string) []string {
	kc := p.kubeconfig(name)
	args := []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
	}
	args = append(args, extra...)
	return append(args, "--leader-elect=false", "--profiling=false", "--v=1")
}

func kubeletArgs(p paths) []string {
	return []string{
		"--config=" + p.at("kubelet.yaml"),
		"--kubeconfig=" + p.kubeconfig("kubelet"),
		"--root-dir=" + p.at("kubelet"),
		"--cert-dir=" + p.at("kubelet", "pki"),
		"--hostname-override=" + nodeName,
		"--node-ip=" + hostIP,
		"--v=1",
	}
}

// describeNetwork is printed once, for people reading the log.
func describeNetwork() string {
	return strings.Join([]string{
		"bridge " + bridgeName + " " + hostIP + " (pods " + podCIDR + ")",
		"Services " + serviceCIDR + " routed to the bridge",
		"API server https://" + net.JoinHostPort(hostIP, apiserverPort),
	}, "; ")
}

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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// webhookNodePort is the webhook Service's node port: kube-proxy answers
// it on the node's address (hostIP) only. publicURL is the webhook's
// public URL (the chart's publicURL): the node port, as a load balancer in
// front of the node would reach it.
const webhookNodePort = 30080

var publicURL = fmt.Sprintf("http://%s:%d", hostIP, webhookNodePort)

const (
	releaseName      = "switchboard"
	releaseNamespace = "switchboard-system"
	// smokeNamespace holds the smoke check's resources.
	smokeNamespace = "e2e"
)

// upstreamsUp starts the sandbox (every SaaS API) and versitygw (S3) on
// the bridge address, where the pods reach them as their gateway. They
// run on the host, not as pods: they are the test's instruments, not the
// product — the test reads the sandbox's admin routes and versitygw's
// root keys directly, and neither has an image (building and loading two
// more images would test nothing of Switchboard's).
func (e *e2e) upstreamsUp(ctx context.Context) error {
	addrs, err := local.FreePorts(hostIP, 1)
	if err != nil {
		return err
	}
	seed := e.p.at("sandbox-seed.json")
	if err := os.WriteFile(seed, scenario.SandboxSeed(), 0o600); err != nil {
		return err
	}
	e.sandboxURL = "http://" + addrs[0]
	sb, err := e.start("sandbox", filepath.Join(e.bin, "sandbox"),
		append([]string{"--addr", addrs[0], "--seed", seed}, scenario.SandboxArgs()...))
	if err != nil {
		return err
	}
	if err := waitHTTP(ctx, sb, e.sandboxURL+"/_sandbox/routes", time.Minute); err != nil {
		return err
	}
	// versitygw as every suite runs it (random root keys, through its
	// environment), on the bridge address; it dies with this process.
	if e.s3, err = testenv.StartS3At(hostIP); err != nil {
		return err
	}
	b, err := yaml.Marshal(e.chartValues())
	if err != nil {
		return err
	}
	fmt.Printf("    sandbox %s, versitygw %s\n", e.sandboxURL, e.s3.Endpoint)
	return os.WriteFile(e.p.at("values.yaml"), b, 0o644)
}

// chartValues are the values the release is installed with: upstreams
// pointed at the sandbox and versitygw on the host.
func (e *e2e) chartValues() map[string]any {
	ups := map[string]string{}
	for _, n := range upstream.Names() {
		ups[string(n)] = e.sandboxURL + "/" + string(n)
	}
	ups["s3"] = e.s3.Endpoint
	return map[string]any{
		// The images were imported into containerd: never pull.
		"image":     map[string]any{"pullPolicy": "Never"},
		"upstreams": ups,
		// Traffic arrives as it would from a load balancer: at the
		// webhook Service's node port, on the node's address.
		"publicURL": publicURL,
		"webhook":   map[string]any{"service": map[string]any{"type": "NodePort", "nodePort": webhookNodePort}},
		// A leader and a hot standby, for the leader's loss.
		"manager": map[string]any{"replicas": 2},
		// Every webhook request with its route, status and duration, in
		// the pod logs kept in logs/pods.
		"log": map[string]any{"level": "debug"},
	}
}

// install runs helm install of the current chart (e.chart) as a platform
// team would and waits for both Deployments to be Available.
func (e *e2e) install(ctx context.Context) error {
	return e.installChart(ctx, e.chart.ref, e.chart.args...)
}

// chartRef is where helm takes a chart from, with the flags that place
// needs (--plain-http for the loopback registry).
type chartRef struct {
	ref  string
	args []string
}

// installChart runs helm install of chart with the run's values and args
// and waits for both Deployments to be Available, which their readiness
// probes decide.
func (e *e2e) installChart(ctx context.Context, chart string, args ...string) error {
	helm := exec.CommandContext(ctx, filepath.Join(e.bin, "helm"), append([]string{"install", releaseName, chart,
		"--kubeconfig", e.p.kubeconfig("admin"), "--namespace", releaseNamespace, "--create-namespace",
		"--values", e.p.at("values.yaml")}, args...)...)
	out, err := helm.CombinedOutput()
	if err != nil {
		return fmt.Errorf("helm install %s: %w\n%s", chart, err, out)
	}
	fmt.Printf("    helm install %s: %s\n", chart, firstLine(string(out), "STATUS:"))
	if _, err := e.kubectl(ctx, "wait", "--namespace", releaseNamespace, "--for=condition=Available",
		"deployment", "--all", "--timeout=5m"); err != nil {
		pods, _ := e.kubectl(ctx, "get", "pods", "-A", "-o", "wide")
		events, _ := e.kubectl(ctx, "get", "events", "-n", releaseNamespace, "--sort-by=.lastTimestamp")
		return fmt.Errorf("%w\n%s\n%s", err, pods, events)
	}
	out2, err := e.kubectl(ctx, "get", "deployments,pods", "--namespace", releaseNamespace, "-o", "wide")
	if err != nil {
		return err
	}
	fmt.Print(indent(out2))
	return nil
}

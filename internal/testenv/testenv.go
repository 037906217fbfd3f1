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

// Package testenv starts a real kube-apiserver and etcd (controller-runtime
// envtest) with the Switchboard CRDs installed, for every test that claims to
// talk to Kubernetes.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Env is a running control plane.
type Env struct {
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is an uncached client, so tests read what the server holds.
	Client client.Client
	// Scheme knows the core kinds and the Switchboard kinds.
	Scheme *runtime.Scheme

	env *envtest.Environment
	// afterRun are checks Main runs once the tests have run.
	afterRun []func() error
}

// GetClient is the Env's client: with GetAPIReader, an Env is a
// setup.Clients, so a suite that drives reconcilers by hand takes the
// binaries' OAuth engine on it (setup.Engine(env, out)) and sets only
// what it changes (a fake clock).
func (e *Env) GetClient() client.Client { return e.Client }

// GetAPIReader is the Env's client, which reads the API server.
func (e *Env) GetAPIReader() client.Reader { return e.Client }

// RepoRoot finds the directory holding go.mod, from the test's working
// directory upwards.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// assets returns KUBEBUILDER_ASSETS, asking hack/envtest.sh (which builds
// and caches the binaries when needed) when it is not set, so that a plain
// `go test ./...` works as well as `make test`.
func assets(root string) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack", "envtest.sh")) //nolint:gosec,noctx // the repository's own script, run once before any test
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/envtest.sh: %w: %s", err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}

// Start starts etcd and kube-apiserver and installs the CRDs from
// config/crd/bases. Call Stop when done.
func Start() (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := assets(root)
	if err != nil {
		return nil, err
	}
	scheme := setup.Scheme()
	e := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: dir,
		Scheme:                scheme,
	}
	began := time.Now()
	cfg, err := e.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest control plane (assets %s): %w", dir, err)
	}
	fmt.Fprintf(os.Stderr, "envtest: control plane started in %s (kube-apiserver and etcd from %s)\n",
		time.Since(began).Round(10*time.Millisecond), dir)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: scheme, env: e}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.env.Stop() }

// CRDNames lists the CRDs envtest installed.
func (e *Env) CRDNames() []string {
	names := make([]string, 0, len(e.env.CRDs))
	for _, c := range e.env.CRDs {
		names = append(names, c.Name)
	}
	return names
}

// Namespace creates a fresh namespace for one test.
func (e *Env) Namespace(prefix string) (string, error) {
	ns := &corev1.Namespace{}
	ns.GenerateName = prefix + "-"
	if err := e.Client.Create(context.Background(), ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// Main is a TestMain body: it starts the control plane into *env, runs
// each setup (which may start a manager; it returns a stop function), runs
// the package's tests, stops everything and exits.
//
//	var env *testenv.Env
//	func TestMain(m *testing.M) { testenv.Main(m, &env) }
func Main(m *testing.M, env **Env, setups ...func(*Env) (stop func(), err error)) {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*env = e
	var stops []func()
	for _, setup := range setups {
		stop, err := setup(e)
		if err != nil {
			fmt.Fprintln(os.Stderr, "test setup:", err)
			_ = e.Stop()
			os.Exit(1)
		}
		stops = append(stops, stop)
	}
	code := m.Run()
	for _, check := range e.afterRun {
		if err := check(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL: after the tests:", err)
			code = 1
		}
	}
	for i := len(stops) - 1; i >= 0; i-- {
		stops[i]()
	}
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

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

package signed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Registry is go-containerregistry's registry (`crane registry serve`) on a
// loopback port the kernel picked, its blobs in a temporary directory.
type Registry struct {
	// Addr is the registry's host:port (127.0.0.1:PORT). Clients speak
	// plain HTTP to it: cosign and crane do so by themselves for a
	// loopback address; helm needs --plain-http.
	Addr  string
	crane string
	dir   string
	cmd   *exec.Cmd
	done  chan struct{}
	log   bytes.Buffer
}

var servingOn = regexp.MustCompile(`serving on port (\d+)`)

// Serve starts `crane registry serve` (crane is its path) on 127.0.0.1 and
// returns once it listens. It runs until Close, or until ctx ends (which
// also bounds the wait for it to listen).
func Serve(ctx context.Context, crane string) (*Registry, error) {
	dir, err := os.MkdirTemp("", "signed-registry-")
	if err != nil {
		return nil, err
	}
	r := &Registry{crane: crane, dir: dir, done: make(chan struct{})}
	r.cmd = exec.CommandContext(ctx, crane, "registry", "serve", "--address", "127.0.0.1:0", "--disk", dir) //nolint:gosec // the caller names the tool
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := r.cmd.StderrPipe()
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	if err := r.cmd.Start(); err != nil {
		return nil, errors.Join(fmt.Errorf("start crane registry serve: %w", err), os.RemoveAll(dir))
	}
	port := make(chan string, 1)
	go r.read(out, port)
	select {
	case p, ok := <-port:
		if ok {
			r.Addr = "127.0.0.1:" + p
			return r, nil
		}
		err = fmt.Errorf("crane registry serve exited: %s", r.log.String())
	case <-ctx.Done():
		err = fmt.Errorf("crane registry serve did not start: %w", ctx.Err())
	}
	return nil, errors.Join(err, r.Close())
}

// read sends the port the registry's log names, keeps the log's first
// lines for errors, and closes done when the process is gone.
func (r *Registry) read(out io.Reader, port chan<- string) {
	sc := bufio.NewScanner(out)
	sent := false
	for sc.Scan() {
		if m := servingOn.FindStringSubmatch(sc.Text()); m != nil && !sent {
			port <- m[1]
			sent = true
		} else if !sent && r.log.Len() < 4096 {
			fmt.Fprintln(&r.log, sc.Text())
		}
	}
	_ = r.cmd.Wait()
	if !sent {
		close(port)
	}
	close(r.done)
}

// Close stops the registry and removes its blobs.
func (r *Registry) Close() error {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
	return os.RemoveAll(r.dir)
}

// Artifact is an image or the chart as loaded into the registry.
type Artifact struct {
	// Name is the release's name for it (digests.txt): REPOSITORY:TAG.
	Name string
	// Repository is where it is in this registry (Addr/…), Tag its tag,
	// Digest its manifest's digest (sha256:…).
	Repository, Tag, Digest string
}

// Ref is the artifact by tag: REPOSITORY:TAG.
func (a Artifact) Ref() string { return a.Repository + ":" + a.Tag }

// DigestRef is the artifact by digest: REPOSITORY@sha256:….
func (a Artifact) DigestRef() string { return a.Repository + "@" + a.Digest }

// Published is a release loaded into a registry.
type Published struct {
	// Images by their repository's last element (manager, webhook).
	Images map[string]Artifact
	Chart  Artifact
}

// Local is name (REPOSITORY:TAG, as the release names it) moved into this
// registry: its host replaced by Addr.
func (r *Registry) Local(name string) string {
	_, rest, _ := strings.Cut(name, "/")
	return r.Addr + "/" + rest
}

// Load pushes every image and the chart of the release in releaseDir with
// `cosign load` (cosign is its path) from its oci/<name> layout, with their
// signatures and attestations, under the tag the release names, and checks
// each one's digest there is the one digests.txt records.
func (r *Registry) Load(ctx context.Context, cosign, releaseDir string) (Published, error) {
	rows, err := ReadDigests(releaseDir)
	if err != nil {
		return Published{}, err
	}
	pub := Published{Images: map[string]Artifact{}}
	seen := map[string]bool{}
	for _, row := range rows {
		if (row.Kind != KindImage && row.Kind != KindChart) || seen[row.Name] {
			continue
		}
		seen[row.Name] = true
		a, err := r.load(ctx, cosign, releaseDir, row)
		if err != nil {
			return Published{}, err
		}
		if row.Kind == KindChart {
			pub.Chart = a
		} else {
			pub.Images[filepath.Base(row.Repository())] = a
		}
	}
	if len(pub.Images) == 0 || pub.Chart.Name == "" {
		return Published{}, fmt.Errorf("%s names %d images and chart %q: want images and a chart", DigestsFile, len(pub.Images), pub.Chart.Name)
	}
	return pub, nil
}

// load pushes one image's or the chart's layout and checks its digest.
func (r *Registry) load(ctx context.Context, cosign, releaseDir string, row Row) (Artifact, error) {
	a := Artifact{Name: row.Name, Repository: r.Local(row.Repository()), Tag: row.Tag()}
	layout := filepath.Join(releaseDir, filepath.FromSlash(row.Layout()))
	if _, err := Run(ctx, cosign, "load", "--allow-http-registry", "--dir", layout, a.Ref()); err != nil {
		return a, err
	}
	var err error
	if a.Digest, err = r.Digest(ctx, a.Ref()); err != nil {
		return a, err
	}
	if a.Digest != row.Digest {
		return a, fmt.Errorf("%s loaded from %s is %s; %s says %s", a.Ref(), row.Layout(), a.Digest, DigestsFile, row.Digest)
	}
	return a, nil
}

// Digest is the digest ref resolves to in this registry (crane digest).
func (r *Registry) Digest(ctx context.Context, ref string) (string, error) {
	out, err := Run(ctx, r.crane, "digest", ref)
	return strings.TrimSpace(string(out)), err
}

// Run runs a program and returns its standard output; an error carries
// its standard error.
func Run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, prog, args...) //nolint:gosec // the caller names the tool
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s", filepath.Base(prog), strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

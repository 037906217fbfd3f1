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

package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// S3 is a running versitygw (https://github.com/versity/versitygw): a real
// S3 server on loopback, its posix backend in a temporary directory. It
// checks SigV4 signatures and presigned-URL expiry, so tests of both are
// real.
type S3 struct {
	// Endpoint is the server's base URL, http://HOST:PORT: the value
	// of `--upstream s3=` and blob.Options.Endpoint.
	Endpoint string
	// Credentials are the root account's, random for each server.
	Credentials blob.Credentials
	// Region is the server's region (blob.DefaultRegion).
	Region string
	// Blob is a client of this server through an outbound policy that
	// allows only it, for uploading fixtures.
	Blob *blob.Client

	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the process's exit, once done is closed
}

// VersityGW finds the versitygw binary: $VERSITYGW, else bin/versitygw in
// the repository (`make versitygw` puts it there).
func VersityGW() (string, error) {
	if p := os.Getenv("VERSITYGW"); p != "" {
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "bin", "versitygw")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("versitygw not found at %s (run `make versitygw`, or set VERSITYGW): %w", p, err)
	}
	return p, nil
}

// s3StartTimeout bounds the wait for a fresh server to answer.
const s3StartTimeout = 30 * time.Second

// StartS3 starts a versitygw on loopback; Stop stops it and removes its
// data. It takes no *testing.T, so TestMain, hack/demo and hack/bench can
// all use it.
func StartS3() (*S3, error) { return StartS3At("127.0.0.1") }

// StartS3At starts a versitygw listening on host, one of this machine's
// addresses (hack/e2e: the bridge address its pods reach).
func StartS3At(host string) (*S3, error) {
	bin, err := VersityGW()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "switchboard-s3-")
	if err != nil {
		return nil, err
	}
	data, iam := filepath.Join(dir, "data"), filepath.Join(dir, "iam")
	for _, d := range []string{data, iam} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	// A free port can be taken between choosing and binding it: try a few.
	for attempt := 1; ; attempt++ {
		s, err := startS3(bin, host, dir, data, iam)
		if err == nil {
			return s, nil
		}
		if attempt == 3 {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
}

func startS3(bin, host, dir, data, iam string) (*S3, error) {
	port, err := freePort(host)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	s := &S3{
		Endpoint: "http://" + addr,
		// Random root keys: nothing outside this process can guess them,
		// and a test that passes with them proves the signatures match.
		Credentials: blob.Credentials{AccessKeyID: capability.Random(15), SecretAccessKey: capability.Random(30)},
		Region:      blob.DefaultRegion,
		dir:         dir,
		done:        make(chan struct{}),
	}
	logFile, err := os.Create(filepath.Join(dir, "versitygw.log")) //nolint:gosec // a file in the server's own temporary directory
	if err != nil {
		return nil, err
	}
	defer func() { _ = logFile.Close() }()
	// The internal IAM service (--iam-dir) makes an unknown access key a
	// 403 InvalidAccessKeyId as on AWS; without one, versitygw's
	// single-account mode answers 404 XAdminUserNotFound, which a HEAD
	// cannot tell from a missing object (see internal/upstream/blob's errors.go).
	s.cmd = exec.Command(bin, //nolint:gosec,noctx // the pinned versitygw from ./bin; it outlives any one context
		"--port", addr, "--health", "/health", "--quiet", "--region", s.Region,
		"--iam-dir", iam, "posix", data)
	// The keys go through the environment, not the command line, where
	// any process on the machine could read them.
	s.cmd.Env = append(os.Environ(),
		"ROOT_ACCESS_KEY_ID="+s.Credentials.AccessKeyID, "ROOT_SECRET_ACCESS_KEY="+s.Credentials.SecretAccessKey)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start versitygw: %w", err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(); err != nil {
		s.kill()
		return nil, fmt.Errorf("versitygw on %s: %w; its log: %s", addr, err, s.logTail())
	}
	ups := upstream.NewSet()
	if err := ups.Set(string(upstream.S3) + "=" + s.Endpoint); err != nil {
		s.kill()
		return nil, err
	}
	out, err := outbound.New(ups, outbound.Options{})
	if err != nil {
		s.kill()
		return nil, err
	}
	if s.Blob, err = blob.New(blob.Options{Endpoint: s.Endpoint, HTTPClient: out.HTTPClient()}); err != nil {
		s.kill()
		return nil, err
	}
	return s, nil
}

// waitReady polls the health route until it answers 200, the process
// exits, or s3StartTimeout passes.
func (s *S3) waitReady() error {
	deadline := time.Now().Add(s3StartTimeout)
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.done:
			if s.err == nil {
				return errors.New("exited before answering")
			}
			return fmt.Errorf("exited before answering: %w", s.err)
		default:
		}
		resp, err := hc.Get(s.Endpoint + "/health") //nolint:noctx // bounded by the client's timeout
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within %s", s3StartTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(host string) (int, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *S3) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "versitygw.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// kill stops the process at once (a server that never became ready).
func (s *S3) kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Stop stops the server (SIGTERM, then SIGKILL after 5 s) and removes its
// data.
func (s *S3) Stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	return os.RemoveAll(s.dir)
}

// CreateBucket creates a bucket owned by the root account; one that exists
// already is fine.
func (s *S3) CreateBucket(ctx context.Context, bucket string) error {
	return s.Blob.CreateBucket(ctx, bucket, s.Region, s.Credentials)
}

// Object names key in bucket with the root credentials.
func (s *S3) Object(bucket, key string) blob.Object {
	return blob.Object{Bucket: bucket, Key: key, Region: s.Region, Credentials: s.Credentials}
}

// WithS3 is a Main setup that starts a versitygw into *s before the
// package's tests:
//
//	func TestMain(m *testing.M) { testenv.Main(m, &env, testenv.WithS3(&s3)) }
func WithS3(s **S3) func(*Env) (func(), error) {
	return func(*Env) (func(), error) {
		started, err := StartS3()
		if err != nil {
			return nil, err
		}
		*s = started
		return func() {
			if err := started.Stop(); err != nil && !errors.Is(err, os.ErrNotExist) {
				fmt.Fprintln(os.Stderr, "stop versitygw:", err)
			}
		}, nil
	}
}

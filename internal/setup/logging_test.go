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

package setup_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/setup/setuptest"
)

// syncBuffer is a log destination several goroutines write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// highest is --zap-log-level=10: client-go logs whole bodies from V(10).
func highest(dest *syncBuffer) *zap.Options {
	return &zap.Options{DestWriter: dest, Level: zapcore.Level(-10)}
}

// touchSecrets does what the binaries do with Secrets, through the same
// client set-up and with the logger in the context as controller-runtime
// and the webhook server put it there: create one holding tokens (a
// stringData request), read it back, list the operator's own Secrets
// through the informer cache, and update it.
func touchSecrets(t *testing.T, log logr.Logger, tokens map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns, err := env.Namespace("logs")
	if err != nil {
		t.Fatal(err)
	}
	scheme := setup.Scheme()
	cl, err := cluster.New(env.Config, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Logger = log
		o.Cache = setup.CacheOptions(scheme)
		co := setup.ClientOptions()
		o.Client.Cache = &co
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = cl.Start(ctx) }()
	defer func() { cancel(); <-done }()
	rctx := logr.NewContext(ctx, log)

	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "grant", Namespace: ns,
			Labels: map[string]string{setup.ManagedByLabel: setup.ManagedByValue}},
		StringData: tokens,
	}
	if err := cl.GetClient().Create(rctx, s); err != nil {
		t.Fatal(err)
	}
	var got corev1.Secret
	if err := cl.GetClient().Get(rctx, client.ObjectKeyFromObject(s), &got); err != nil {
		t.Fatal(err)
	}
	// A controller that owns Secrets watches them: the informer lists them.
	if _, err := cl.GetCache().GetInformer(rctx, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	if !cl.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	got.StringData = map[string]string{"note": "rotated " + tokens["access_token"]}
	if err := cl.GetClient().Update(rctx, &got); err != nil {
		t.Fatal(err)
	}
}

func tokensFor(t *testing.T) map[string]string {
	return map[string]string{
		"access_token":  "secret-access-" + strings.ToLower(t.Name()[:8]) + "-0f9e8d7c6b5a4",
		"refresh_token": "secret-refresh-a1b2c3d4e5f60718293a4b5c",
		"client_secret": "secret-client-Zq8Wv7Ut6Sr5Qp4On3Ml2",
	}
}

func TestAPIBodiesStayOutOfTheLogAtTheHighestVerbosity(t *testing.T) {
	tokens := tokensFor(t)

	// The control: the plain zap logger the binaries used before shows the
	// leak, so this test exercises the path that leaks and its scanner
	// finds what leaks.
	var raw syncBuffer
	touchSecrets(t, zap.New(zap.UseFlagOptions(highest(&raw))), tokens)
	if found := setuptest.Find(raw.String(), tokens); len(found) == 0 {
		t.Fatalf("the unfiltered logger leaked nothing at V(10): the test no longer reaches client-go's body dumps\n%s", raw.String())
	}

	var out syncBuffer
	touchSecrets(t, setup.NewLogger(highest(&out)), tokens)
	logged := out.String()
	if found := setuptest.Find(logged, tokens); len(found) > 0 {
		t.Fatalf("token values reached the log: %v", found)
	}
	// The same lines are still written, with the body's size only.
	for _, msg := range []string{`"msg":"Request Body"`, `"msg":"Response Body"`, setup.Redacted} {
		if !strings.Contains(logged, msg) {
			t.Fatalf("no %s in the log at V(10): client-go's debug lines are gone, not redacted\n%s", msg, logged)
		}
	}
}

func TestKlogsFallbackLoggerIsFilteredToo(t *testing.T) {
	// A request whose context carries no logger logs through
	// klog.Background(), which InitLogging points at the same filter.
	tokens := tokensFor(t)
	before := len(klogOut.String()) // earlier tests' clusters logged there too

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(env.Config, client.Options{Scheme: setup.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := env.Namespace("klog")
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "grant", Namespace: ns}, StringData: tokens}
	if err := c.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	klog.Background().Info("done") // a line of klog's own, so the buffer is the right one
	logged := klogOut.String()[before:]
	if found := setuptest.Find(logged, tokens); len(found) > 0 {
		t.Fatalf("token values reached the log: %v", found)
	}
	if !strings.Contains(logged, `"msg":"Response Body"`) || !strings.Contains(logged, `"msg":"done"`) {
		t.Fatalf("klog's fallback logger did not write client-go's body lines here\n%s", logged)
	}
}

func TestRedactKeepsOtherValuesAndTheCaller(t *testing.T) {
	var out syncBuffer
	log := setup.NewLogger(&zap.Options{DestWriter: &out, Level: zapcore.Level(-10), ZapOpts: []uberzap.Option{uberzap.AddCaller()}})
	log.WithValues("body", "from WithValues hunter2").V(8).Info("Response Body", "body", []byte("hunter2"), "verb", "GET")
	logged := out.String()
	if strings.Contains(logged, "hunter2") {
		t.Fatalf("a body reached the log: %s", logged)
	}
	for _, want := range []string{`"verb":"GET"`, `"body":"[redacted] 7 bytes"`, `"caller":"setup/logging_test.go:`} {
		if !strings.Contains(logged, want) {
			t.Fatalf("log lacks %s: %s", want, logged)
		}
	}
}

// TestAnErrorCarriesNoStackTraceUnlessAskedFor: both binaries log a
// failed reconcile at error level; by default its line has no stack
// trace (always the runner's own, never the cause's), and
// --zap-stacktrace-level=error brings it back.
func TestAnErrorCarriesNoStackTraceUnlessAskedFor(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stack bool
	}{
		{nil, false},
		{[]string{"--zap-stacktrace-level=error"}, true},
	} {
		var out syncBuffer
		opts := &zap.Options{DestWriter: &out}
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		setup.BindLogFlags(opts, fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		setup.NewLogger(opts).Error(errors.New("upstream answered 500"), "reconcile failed", "reason", "UpstreamUnavailable")
		line := out.String()
		if !strings.Contains(line, "upstream answered 500") {
			t.Fatalf("%v: the error was not logged: %q", tc.args, line)
		}
		if got := strings.Contains(line, `"stacktrace"`); got != tc.stack {
			t.Errorf("%v: stack trace logged %v, want %v: %s", tc.args, got, tc.stack, line)
		}
	}
}

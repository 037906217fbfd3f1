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

package sheetsync_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// These tests drive the SheetConnection and SheetSync controllers' Reconcile
// by hand with a fake clock, on a real API server, against the sandbox's
// Google OAuth and Sheets emulators through the real sheets/v4 library:
// timers (token refresh, header recheck, pacing, backoff, retention) are
// asserted without waiting for them.

var (
	env      *testenv.Env
	box      *sandbox.Server
	googleEm = sandbox.NewGoogleOAuth()
	sheetsEm = sandbox.NewGoogleSheets(googleEm)
	out      *outbound.Client
	sheets   *gsheets.Client
	clk      atomic.Pointer[clocktesting.FakeClock]
	// cached reads through an informer cache with the field indexes, as
	// the manager's client does (the pending syncs are listed by index);
	// it writes to the API server.
	cached client.Client
)

// grantScope is what a SheetConnection's grant holds.
var grantScope = strings.Join(targets.Sheets.Provider.Scopes, " ")

func TestMain(m *testing.M) {
	testenv.Main(m, &env, func(*testenv.Env) (func(), error) {
		googleEm.Now = func() time.Time {
			if c := clk.Load(); c != nil {
				return c.Now()
			}
			return time.Now()
		}
		googleEm.AddClient("sheet-client", "sheet-secret")
		box = sandbox.New(googleEm, sheetsEm)
		srv := httptest.NewServer(box)
		var err error
		if out, err = outbound.New(sandbox.Upstreams(srv.URL), outbound.Options{Timeout: 2 * time.Second}); err != nil {
			return nil, err
		}
		if sheets, err = gsheets.New(context.Background(), out); err != nil {
			return nil, err
		}
		// The manager's client and cache as the binary builds them (its
		// scope, Secrets without their data, its indexes), running no
		// kind: the tests drive the reconcilers by hand on a fake clock.
		built, err := testenv.Operator(wire.Operator{Deps: wire.Deps{Outbound: out}}).Build(context.Background(), env.Config)
		if err != nil {
			return nil, err
		}
		stop := testenv.StartManager(built.Manager)
		cached = built.Manager.GetClient()
		return func() { stop(); srv.Close() }, nil
	})
}

// recorder keeps every Event's text.
type recorder = testenv.Recorder

type fixture struct {
	ns, spreadsheet, title string
	refresh                string
	key                    types.NamespacedName
	clock                  *clocktesting.FakeClock
	rec                    *recorder
	engine                 *oauth.Engine
	conn                   *runner.Runner[*v1alpha1.SheetConnection]
	syncs                  *runner.Runner[*v1alpha1.SheetSync]
	// reports is the connection controller's mailbox, which the
	// SheetSync controller posts to.
	reports *sheetconnection.Reports
}

var sheetCount atomic.Int64

// newFixture makes a spreadsheet (time zone Asia/Tokyo) whose sheet title
// has row 1 = testenv.SheetHeader, a grant, and a SheetConnection on it.
func newFixture(t *testing.T, title string, change func(*v1alpha1.SheetConnection)) *fixture {
	t.Helper()
	return newFixtureOf(t, googleEm.DefaultSubject, title, change)
}

// newFixtureOf is newFixture with the grant of the Google account sub
// (Sheets counts its write quota per account).
func newFixtureOf(t *testing.T, sub, title string, change func(*v1alpha1.SheetConnection)) *fixture {
	t.Helper()
	c := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	clk.Store(c)
	t.Cleanup(func() { clk.Store(nil) })
	ns, err := env.Namespace("sheets")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ns: ns, title: title, spreadsheet: "ss-" + strconv.FormatInt(sheetCount.Add(1), 10) + "-0123456789",
		key: types.NamespacedName{Namespace: ns, Name: "timesheet"}, clock: c, rec: &recorder{},
		refresh: googleEm.IssueRefreshTokenFor("sheet-client", grantScope, sub)}
	sheetsEm.AddSpreadsheet(f.spreadsheet, "Asia/Tokyo", sandbox.SheetSpec{ID: 0, Title: "Sheet1"},
		sandbox.SheetSpec{ID: 7001, Title: title, Rows: [][]string{testenv.SheetHeader}})
	if err := testenv.SheetConnection(context.Background(), env.Client, ns, f.spreadsheet, title, f.refresh, change); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetConnection{}, "timesheet", nil)
	f.cachedSees(t, &corev1.Secret{}, "sheet-ingest", nil)
	f.engine = setup.Engine(env, out)
	f.engine.Clock = c
	f.reports = &sheetconnection.Reports{}
	f.conn = (&sheetconnection.Reconciler{Client: cached, OAuth: f.engine, Sheets: sheets, Recorder: f.rec, Clock: c,
		PublicURL: "https://hooks.example.com", Reports: f.reports}).Runner()
	f.syncs = (&sheetsync.Reconciler{Client: cached, OAuth: f.engine, Sheets: sheets, Recorder: f.rec, Clock: c,
		Retries: outbound.Schedule{Base: time.Second, Retries: 2, Max: time.Minute}, Connections: f.reports}).Runner()
	return f
}

func (f *fixture) reconcileConn(t *testing.T) ctrl.Result {
	t.Helper()
	res, err := f.conn.Reconcile(context.Background(), ctrl.Request{NamespacedName: f.key})
	if err != nil {
		t.Fatalf("reconcile connection: %v", err)
	}
	f.settled(t)
	return res
}

func (f *fixture) reconcileSync(t *testing.T, name string) ctrl.Result {
	t.Helper()
	res, err := f.syncs.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: f.ns, Name: name}})
	if err != nil {
		t.Fatalf("reconcile sync %s: %v", name, err)
	}
	f.settled(t)
	var list v1alpha1.SheetSyncList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		f.cachedSees(t, &v1alpha1.SheetSync{}, s.Name, func(o client.Object) bool { return o.GetResourceVersion() == s.ResourceVersion })
	}
	return res
}

func (f *fixture) connection(t *testing.T) *v1alpha1.SheetConnection {
	t.Helper()
	c := &v1alpha1.SheetConnection{}
	if err := env.Client.Get(context.Background(), f.key, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fixture) sync(t *testing.T, name string) *v1alpha1.SheetSync {
	t.Helper()
	s := &v1alpha1.SheetSync{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// session is a finished session that started at minute m of a fixed day.
func session(id string, m int) v1alpha1.TimeTrackerSession {
	start := time.Date(2026, 11, 22, 1, m, 0, 0, time.UTC)
	return v1alpha1.TimeTrackerSession{ID: id, Title: "work " + id, StartedAt: start.UnixMilli(),
		EndedAt: start.Add(25 * time.Minute).UnixMilli(), DurationSeconds: 1500, Project: "p", Tags: []string{"a", "b"}}
}

// post creates the SheetSync of s as the ingest route does, and waits until
// the cache holds it.
func (f *fixture) post(t *testing.T, s v1alpha1.TimeTrackerSession) string {
	t.Helper()
	ss := timesheet.NewSync(f.connection(t), s)
	if err := env.Client.Create(context.Background(), ss); err != nil {
		t.Fatal(err)
	}
	f.cachedSees(t, &v1alpha1.SheetSync{}, ss.Name, nil)
	return ss.Name
}

// cachedSees waits until the cache holds the object name (and ok says yes
// to it): the controllers read the cache, as in the manager.
func (f *fixture) cachedSees(t *testing.T, obj client.Object, name string, ok func(client.Object) bool) {
	t.Helper()
	key := types.NamespacedName{Namespace: f.ns, Name: name}
	testenv.Eventually(t, "the cache to show "+name, func() bool {
		return cached.Get(context.Background(), key, obj) == nil && (ok == nil || ok(obj))
	})
}

// settled waits until the cache shows the connection's status as the
// API server holds it.
func (f *fixture) settled(t *testing.T) {
	t.Helper()
	c := &v1alpha1.SheetConnection{}
	if err := env.Client.Get(context.Background(), f.key, c); apierrors.IsNotFound(err) {
		return
	} else if err != nil {
		t.Fatal(err)
	}
	want := c.ResourceVersion
	f.cachedSees(t, &v1alpha1.SheetConnection{}, "timesheet", func(o client.Object) bool { return o.GetResourceVersion() == want })
}

// active reconciles the connection until it is Active.
func (f *fixture) active(t *testing.T) *v1alpha1.SheetConnection {
	t.Helper()
	f.reconcileConn(t)
	c := f.connection(t)
	if c.Status.Phase != v1alpha1.ConnectionActive {
		t.Fatalf("connection not Active: %+v", c.Status)
	}
	f.settled(t)
	return c
}

// data is the sheet's rows below the header.
func (f *fixture) data() [][]string {
	rows := sheetsEm.Rows(f.spreadsheet, f.title)
	if len(rows) == 0 {
		return nil
	}
	return rows[1:]
}

func condition(conds []metav1.Condition, typ string) metav1.Condition {
	for _, c := range conds {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

func secretExists(t *testing.T, ns, name string) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &corev1.Secret{})
	return err == nil
}

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

package gitops_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// sampleSpreadsheet is the SheetConnection sample's spreadsheet, and
// sampleHeader row 1 of its "Log" tab (the sample maps project by the
// header name "Project").
const sampleSpreadsheet = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"

var sampleHeader = []string{"Title", "Started", "Ended", "Seconds", "Project", "Tags"}

// fixture is one namespace holding what the samples refer to, as a
// platform team and the OAuth callbacks would have left it: the OAuth
// client Secrets, grants the sandbox issued (a person's earlier consent),
// the webhook and ingest Secrets, the S3 credentials and the blob, the
// spreadsheet with its header row, and a Notion page shared with the
// integration. The "-2" Secrets are a second set of grants for the
// objects the test breaks and repairs beside the samples, so that no two
// objects rotate one grant.
type fixture struct {
	ns  string
	ws  sandbox.NotionWorkspace
	ws2 sandbox.NotionWorkspace
}

var fixtures int

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	ns, err := env.Namespace("gitops")
	if err != nil {
		t.Fatal(err)
	}
	fixtures++
	f := &fixture{ns: ns}
	f.ws = sandbox.NotionWorkspace{ID: fmt.Sprintf("%08d-9a0b-4c0d-8e0f-000000000001", fixtures), Name: "GitOps Lab",
		BotID: fmt.Sprintf("%08d-b0b0-4000-8000-000000000001", fixtures)}
	f.ws2 = sandbox.NotionWorkspace{ID: fmt.Sprintf("%08d-9a0b-4c0d-8e0f-000000000002", fixtures), Name: "GitOps Lab 2",
		BotID: fmt.Sprintf("%08d-b0b0-4000-8000-000000000002", fixtures)}
	notionEm.AddPage(f.ws.ID, "Reading list")
	notionEm.AddPage(f.ws2.ID, "Reading list")
	grantedAt := time.Now().UTC().Format(time.RFC3339Nano)
	secrets := map[string]map[string]string{
		"notion-client":    {"client_id": notionClientID, "client_secret": notionClientSecret},
		"notion-webhook":   {"token": "gitops-webhook-token-0123456789abcdef"},
		"notion-webhook-2": {"token": "gitops-webhook-token-2-0123456789abcdef"},
		"notion-token":     {"refresh_token": notionEm.IssueRefreshToken(notionClientID, f.ws)},
		"notion-token-2":   {"refresh_token": notionEm.IssueRefreshToken(notionClientID, f.ws2)},
		"google-client":    {"client_id": googleClientID, "client_secret": googleClientSecret},
		"calendar-token":   {"refresh_token": googleEm.IssueRefreshToken(googleClientID, targets.CalendarScope)},
		"calendar-token-2": {"refresh_token": googleEm.IssueRefreshToken(googleClientID, targets.CalendarScope)},
		"google-token":     {"refresh_token": googleEm.IssueRefreshToken(googleClientID, targets.SheetsScope), "granted_at": grantedAt},
		"google-token-2":   {"refresh_token": googleEm.IssueRefreshToken(googleClientID, targets.SheetsScope), "granted_at": grantedAt},
		"sheet-ingest":     {"token": "gitops-ingest-token-0123456789abcdef"},
		"sheet-ingest-2":   {"token": "gitops-ingest-token-2-0123456789abcdef"},
	}
	for _, k := range kits {
		more, err := k.secrets(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(secrets, more)
	}
	for name, data := range secrets {
		if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}); err != nil {
			t.Fatal(err)
		}
	}
	sheetsEm.AddSpreadsheet(sampleSpreadsheet, "Asia/Tokyo", sandbox.SheetSpec{ID: 0, Title: "Log", Rows: [][]string{sampleHeader}})
	return f
}

// sample reads kind's sample into ns.
func sample(t *testing.T, ns, kind string) *unstructured.Unstructured {
	t.Helper()
	u := testenv.Sample(t, kind)
	u.SetNamespace(ns)
	return u
}

// sampleFiles lists the kinds config/samples holds a sample of.
func sampleKinds(t *testing.T) []string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "samples", "switchboard_v1alpha1_*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, f := range files {
		kinds = append(kinds, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "switchboard_v1alpha1_"), ".yaml"))
	}
	return kinds
}

// hasSpecField reports whether kind's Go type has the spec field name
// (Suspend: the kind can be suspended).
func hasSpecField(t *testing.T, kind, name string) bool {
	t.Helper()
	obj, err := env.Scheme.New(v1alpha1.GroupVersion.WithKind(kind))
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := reflect.TypeOf(obj).Elem().FieldByName("Spec")
	if !ok {
		return false
	}
	_, ok = spec.Type.FieldByName(name)
	return ok
}

// fetch reads the object's current state from the API server.
func fetch(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// compute is kstatus's verdict, as kubectl wait, Flux and cli-utils's
// appliers reach it.
func compute(t *testing.T, u *unstructured.Unstructured) *status.Result {
	t.Helper()
	res, err := status.Compute(u)
	if err != nil {
		t.Fatalf("kstatus on %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return res
}

// generations returns metadata.generation and status.observedGeneration
// (-1 when absent).
func generations(u *unstructured.Unstructured) (gen, observed int64) {
	observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if !found {
		observed = -1
	}
	return u.GetGeneration(), observed
}

// condition returns a status condition's status and reason.
func condition(u *unstructured.Unstructured, typ string) (st, reason string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			st, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			return st, reason
		}
	}
	return "", ""
}

// matrix records which states each kind was seen in, by kstatus and by
// the Argo CD check, for the summary the test logs.
type matrix struct {
	mu   sync.Mutex
	seen map[string]map[string]bool
}

func (m *matrix) add(kind, state string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]map[string]bool{}
	}
	if m.seen[kind] == nil {
		m.seen[kind] = map[string]bool{}
	}
	m.seen[kind][state] = true
}

func (m *matrix) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	kinds := make([]string, 0, len(m.seen))
	for k := range m.seen {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		states := make([]string, 0, len(m.seen[k]))
		for s := range m.seen[k] {
			states = append(states, s)
		}
		sort.Strings(states)
		fmt.Fprintf(&b, "  %-18s %s\n", k, strings.Join(states, ", "))
	}
	return b.String()
}

var seen = &matrix{}

// expect asserts both readings of one object state: kstatus's status and
// the Argo CD check's health, running the check docs/gitops.md shows for
// the object's kind. state names it in the summary.
func expect(t *testing.T, u *unstructured.Unstructured, state string, want status.Status, wantHealth string) {
	t.Helper()
	res := compute(t, u)
	if res.Status != want {
		t.Fatalf("%s %s (%s): kstatus %s (%s), want %s; status %v", u.GetKind(), u.GetName(), state, res.Status, res.Message, want, u.Object["status"])
	}
	script, ok := argoScripts(t)[u.GetKind()]
	if !ok {
		t.Fatalf("docs/gitops.md has no Argo CD health check for %s", u.GetKind())
	}
	if health, msg := argoHealth(t, script, u); health != wantHealth {
		t.Fatalf("%s %s (%s): Argo CD health %s (%s), want %s", u.GetKind(), u.GetName(), state, health, msg, wantHealth)
	}
	seen.add(u.GetKind(), fmt.Sprintf("%s=%s/%s", state, want, wantHealth))
}

// waitFor polls the object until kstatus says want with the conditions
// describing the current generation (observedGeneration == generation),
// and returns it. A Current object must also carry Ready=True, so that an
// object the controller never wrote (kstatus calls it Current: see
// TestKstatusCallsAnObjectWithoutStatusCurrent) does not pass.
func waitFor(t *testing.T, u *unstructured.Unstructured, want status.Status) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	testenv.EventuallyReport(t, 20*time.Second, fmt.Sprintf("%s %s to be %s at its generation", u.GetKind(), u.GetName(), want), func() (bool, string) {
		got = fetch(t, u)
		res := compute(t, got)
		gen, observed := generations(got)
		ready, _ := condition(got, v1alpha1.ReadyCondition)
		if res.Status == want && gen == observed && (want != status.CurrentStatus || ready == "True") {
			return true, ""
		}
		return false, fmt.Sprintf("kstatus %s (%s), generation %d, observed %d", res.Status, res.Message, gen, observed)
	})
	return got
}

// edit changes an object's spec with an update (retried on conflicts) and
// returns the API server's answer: the new generation beside the status
// the controller wrote for the old one.
func edit(t *testing.T, u *unstructured.Unstructured, change func(spec map[string]any)) (*unstructured.Unstructured, error) {
	t.Helper()
	var got *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got = fetch(t, u)
		spec, _ := got.Object["spec"].(map[string]any)
		change(spec)
		return env.Client.Update(context.Background(), got)
	})
	return got, err
}

// mustEdit is edit that fails the test on an error, and checks that the
// answer is InProgress for kstatus and Progressing for Argo CD: the new
// generation is not observed yet.
func mustEdit(t *testing.T, u *unstructured.Unstructured, state string, change func(spec map[string]any)) *unstructured.Unstructured {
	t.Helper()
	before := fetch(t, u).GetGeneration()
	got, err := edit(t, u, change)
	if err != nil {
		t.Fatal(err)
	}
	if gen, observed := generations(got); gen != before+1 || observed >= gen {
		t.Fatalf("after a spec change: generation %d (before %d), observed %d", gen, before, observed)
	}
	expect(t, got, state, status.InProgressStatus, "Progressing")
	return got
}

// isInvalid reports a refusal by the API server's validation (CEL).
func isInvalid(err error) bool { return apierrors.IsInvalid(err) }

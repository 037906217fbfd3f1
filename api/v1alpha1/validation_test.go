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

package v1alpha1_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream/slides"
)

// These tests run the CRDs' OpenAPI schemas and CEL rules on a real
// kube-apiserver: what passes here is what `kubectl apply` accepts.

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func namespace(t *testing.T) string {
	t.Helper()
	ns, err := env.Namespace("api")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// set and del edit a manifest by a dotted path.
func set(path string, value any) func(map[string]any) {
	return func(obj map[string]any) {
		if err := unstructured.SetNestedField(obj, value, strings.Split(path, ".")...); err != nil {
			panic(err)
		}
	}
}

func del(path string) func(map[string]any) {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, strings.Split(path, ".")...) }
}

type invalidCase struct {
	name    string
	edit    []func(map[string]any)
	message string // a part of the API server's answer a person reads
}

// create applies edits to the kind's sample and creates it.
func create(t *testing.T, ns, kind string, edits ...func(map[string]any)) (*unstructured.Unstructured, error) {
	t.Helper()
	u := testenv.Sample(t, kind)
	u.SetNamespace(ns)
	for _, edit := range edits {
		edit(u.Object)
	}
	err := env.Client.Create(context.Background(), u)
	return u, err
}

func TestEveryCRDIsInstalledInTheSwitchboardCategory(t *testing.T) {
	// One CRD per kind of the API package, each named <plural>.<group>.
	want := map[string]bool{}
	for _, kind := range v1alpha1.Kinds() {
		want[kind] = false
	}
	for _, name := range env.CRDNames() {
		plural, group, _ := strings.Cut(name, ".")
		kind := kindOfPlural(t, plural)
		if _, ok := want[kind]; !ok || group != v1alpha1.GroupVersion.Group {
			t.Errorf("unexpected CRD %s", name)
		}
		want[kind] = true
	}
	for kind, seen := range want {
		if !seen {
			t.Errorf("no CRD for %s is installed: run make manifests", kind)
		}
	}
	// The category is what `kubectl get switchboard -A` resolves.
	_, lists, err := discoveryFor(t).ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	inCategory := 0
	for _, l := range lists {
		if l.GroupVersion != v1alpha1.GroupVersion.String() {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			if !contains(r.Categories, v1alpha1.Category) {
				t.Errorf("%s is not in category %q", r.Name, v1alpha1.Category)
			}
			if len(r.ShortNames) == 0 {
				t.Errorf("%s has no short name", r.Name)
			}
			inCategory++
		}
	}
	if inCategory != len(want) {
		t.Errorf("discovery lists %d Switchboard resources, want %d", inCategory, len(want))
	}
}

func TestSamplesAreAccepted(t *testing.T) {
	ns := namespace(t)
	for _, kind := range v1alpha1.Kinds() {
		t.Run(kind, func(t *testing.T) {
			if _, err := create(t, ns, kind); err != nil {
				t.Fatalf("sample rejected: %v", err)
			}
		})
	}
}

// kindOfPlural is the kind a resource's plural name serves, as the API
// server's discovery says.
func kindOfPlural(t *testing.T, plural string) string {
	t.Helper()
	res, err := discoveryFor(t).ServerResourcesForGroupVersion(v1alpha1.GroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.APIResources {
		if r.Name == plural {
			return r.Kind
		}
	}
	return ""
}

func runInvalid(t *testing.T, kind string, cases []invalidCase) {
	t.Helper()
	if len(cases) < 4 {
		t.Fatalf("%s: want at least four invalid manifests, have %d", kind, len(cases))
	}
	ns := namespace(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := create(t, ns, kind, tc.edit...)
			if err == nil {
				t.Fatalf("accepted; want rejection with %q", tc.message)
			}
			if !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("rejected with\n  %v\nwant a message containing\n  %q", err, tc.message)
			}
		})
	}
}

func TestSlideStockRejects(t *testing.T) {
	runInvalid(t, "SlideStock", []invalidCase{
		{"a URL on another site", []func(map[string]any){set("spec.url", "https://example.com/jnunemaker/atom")},
			"url must be a presentation on SpeakerDeck"},
		{"a SpeakerDeck URL without a deck", []func(map[string]any){set("spec.url", "https://speakerdeck.com/jnunemaker")},
			"url must be a presentation on SpeakerDeck"},
		{"a Google Docs document rather than a presentation", []func(map[string]any){set("spec.url", "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit")},
			"url must be a presentation on SpeakerDeck"},
		{"an ftp URL to Docswell", []func(map[string]any){set("spec.url", "ftp://www.docswell.com/s/takai/59VDWM")},
			"url must be a presentation on SpeakerDeck"},
		{"a Google Slides id too short to be one", []func(map[string]any){set("spec.url", "https://docs.google.com/presentation/d/abc/edit")},
			"url must be a presentation on SpeakerDeck"},
		{"no URL", []func(map[string]any){del("spec.url")}, "spec.url: Required value"},
		{"a memo over 4096 characters", []func(map[string]any){set("spec.memo", strings.Repeat("m", 4097))},
			"spec.memo: Too long"},
	})
}

// The API server and the controller's parser read spec.url with one
// grammar (internal/upstream/slides): every URL the parser accepts is admitted,
// every URL it refuses is refused with the rule's message, and so are
// variants of them (case, ports, white space, slashes) the tables do not
// list.
func TestSlideStockAdmitsEveryURLTheParserAccepts(t *testing.T) {
	ns := namespace(t)
	for _, e := range slides.AcceptedExamples() {
		t.Run(e.URL, func(t *testing.T) {
			if err := createStock(ns, e.URL, false); err != nil {
				t.Fatalf("the parser accepts %q (canonical %s), the API server refuses it: %v", e.URL, e.Canonical, err)
			}
		})
	}
}

func TestSlideStockRefusesEveryURLTheParserRefuses(t *testing.T) {
	ns := namespace(t)
	for _, e := range slides.RefusedExamples() {
		t.Run(e.URL, func(t *testing.T) {
			// Length and emptiness are the schema's to refuse, before CEL.
			want := slides.AdmissionMessage
			switch {
			case e.URL == "":
				want = "spec.url in body should be at least 1 chars long"
			case utf8.RuneCountInString(e.URL) > slides.MaxURLLength:
				want = "spec.url: Too long"
			}
			err := createStock(ns, e.URL, true)
			if err == nil {
				t.Fatalf("admitted; the parser refuses it (%s)", e.Reason)
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("refused with\n  %v\nwant a message containing\n  %q", err, want)
			}
		})
	}
}

func TestSlideStockAdmissionAgreesWithTheParserOnVariants(t *testing.T) {
	ns := namespace(t)
	checked := 0
	for _, e := range slides.AcceptedExamples() {
		for _, v := range urlVariants(e.URL) {
			_, perr := slides.Parse(v)
			aerr := createStock(ns, v, true)
			if (perr == nil) != (aerr == nil) {
				t.Errorf("%q: parser says %v, API server says %v", v, perr, aerr)
			}
			checked++
		}
	}
	t.Logf("%d variants, admission and parser agree on each", checked)
}

// urlVariants rewrites u in the ways people and tools do.
func urlVariants(u string) []string {
	out := []string{" \t" + u + "\n ", strings.ToUpper(u), u + "?q=1#f", u + "#\x01", u + "/extra/segments"}
	scheme, rest, ok := strings.Cut(strings.TrimSpace(u), "://")
	if !ok {
		return out
	}
	host, path, _ := strings.Cut(rest, "/")
	for _, v := range []struct{ scheme, host, path string }{
		{strings.ToUpper(scheme), strings.ToUpper(host), path},
		{scheme, host + ":443", path},
		{scheme, host + ":8443", path},
		{scheme, host + ".", path},
		{scheme, "x@" + host, path},
		{scheme, "www." + host, path},
		{scheme, host, "/" + strings.ReplaceAll(path, "/", "//")},
		{"ftp", host, path},
		{scheme, strings.Replace(host, "k", "\u212a", 1), path},
	} {
		out = append(out, v.scheme+"://"+v.host+"/"+v.path)
	}
	return out
}

// createStock creates (or only tries, with dryRun) a SlideStock with url.
func createStock(ns, url string, dryRun bool) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "SlideStock",
		"metadata": map[string]any{"generateName": "stock-", "namespace": ns},
		"spec":     map[string]any{"url": url},
	}}
	var opts []client.CreateOption
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	return env.Client.Create(context.Background(), u, opts...)
}

func TestNotionIntegrationRejects(t *testing.T) {
	runInvalid(t, "NotionIntegration", []invalidCase{
		{"no OAuth client Secret", []func(map[string]any){del("spec.oauth.clientSecretRef")}, "spec.oauth.clientSecretRef: Required value"},
		{"no webhook Secret", []func(map[string]any){del("spec.webhookSecretRef")}, "spec.webhookSecretRef: Required value"},
		{"refresh margin as long as the lifetime", []func(map[string]any){set("spec.tokenRefresh", map[string]any{"assumedLifetime": "24h", "refreshBefore": "24h"})},
			"tokenRefresh.refreshBefore must be shorter than tokenRefresh.assumedLifetime"},
		{"a database id that is not a Notion id", []func(map[string]any){set("spec.database.id", "not-an-id")}, "spec.database.id in body should match"},
		{"a Secret name with upper case", []func(map[string]any){set("spec.oauth.tokenSecretRef.name", "Notion_Token")}, "spec.oauth.tokenSecretRef.name in body should match"},
		{"a backfill every second", []func(map[string]any){set("spec.backfillInterval", "1s")}, "backfillInterval must be at least 1m"},
	})
}

func TestPaperSyncRejects(t *testing.T) {
	runInvalid(t, "PaperSync", []invalidCase{
		{"a link that is not arXiv", []func(map[string]any){set("spec.link", "https://example.org/abs/2301.12345")}, "link must be an arXiv abstract or PDF URL"},
		{"a malformed arXiv id", []func(map[string]any){set("spec.arxivID", "23.1")}, "spec.arxivID in body should match"},
		{"a malformed page id", []func(map[string]any){set("spec.pageID", "page-1")}, "spec.pageID in body should match"},
		{"no integration", []func(map[string]any){del("spec.integrationRef")}, "spec.integrationRef: Required value"},
	})
}

func TestCalendarWatchRejects(t *testing.T) {
	runInvalid(t, "CalendarWatch", []invalidCase{
		{"a channel TTL over 7 days", []func(map[string]any){set("spec.channel.ttl", "169h")}, "channel.ttl must be between 1h and 168h"},
		{"renew-before as long as the TTL", []func(map[string]any){set("spec.channel", map[string]any{"ttl": "24h", "renewBefore": "24h"})},
			"channel.renewBefore must be shorter than channel.ttl"},
		{"a sink with nothing in it", []func(map[string]any){set("spec.sink", map[string]any{})}, "sink needs objects, http, or both"},
		{"an HTTP sink that is not a URL", []func(map[string]any){set("spec.sink.http", map[string]any{"url": "mailto:ops@example.com", "signingSecretRef": map[string]any{"name": "hook"}})},
			"http.url must be an http or https URL"},
		{"a backup sync every 10 seconds", []func(map[string]any){set("spec.backupSyncInterval", "10s")}, "backupSyncInterval must be between 1m and 24h"},
		{"no calendar", []func(map[string]any){del("spec.calendarID")}, "spec.calendarID: Required value"},
	})
}

func TestReceiveLinkRejects(t *testing.T) {
	runInvalid(t, "ReceiveLink", []invalidCase{
		{"a TTL over 14 days", []func(map[string]any){set("spec.ttl", "337h")}, "ttl must be positive and at most 336h (14 days)"},
		{"both ttl and expiresAt", []func(map[string]any){set("spec.expiresAt", "2030-01-01T00:00:00Z")}, "set exactly one of ttl and expiresAt"},
		{"neither ttl nor expiresAt", []func(map[string]any){del("spec.ttl")}, "set exactly one of ttl and expiresAt"},
		{"a key climbing out of its folder", []func(map[string]any){set("spec.blob.key", "user_prize/../secrets.txt")}, "blob key must be relative and must not contain '..'"},
		{"a bucket name S3 refuses", []func(map[string]any){set("spec.blob.bucket", "User_Prize")}, "spec.blob.bucket in body should match"},
		{"a zero TTL", []func(map[string]any){set("spec.ttl", "0s")}, "ttl must be positive"},
	})
}

func TestSheetConnectionRejects(t *testing.T) {
	runInvalid(t, "SheetConnection", []invalidCase{
		{"a required column missing", []func(map[string]any){del("spec.columnMapping.durationSeconds")},
			"columnMapping must map the required fields title, startedAt, endedAt and durationSeconds"},
		{"two fields in one column", []func(map[string]any){set("spec.columnMapping.endedAt", "B")},
			"columnMapping values must be unique"},
		{"a field the session does not have", []func(map[string]any){set("spec.columnMapping.mood", "G")},
			"columnMapping keys must be session fields"},
		{"a header name over 128 characters", []func(map[string]any){set("spec.columnMapping.notes", strings.Repeat("h", 129))},
			"Too long: may not be more than 128"},
		{"a header with trailing spaces", []func(map[string]any){set("spec.columnMapping.notes", "Notes  ")},
			"a column is a column letter (A to ZZZ) or a header name of at most 128 characters"},
		{"both sheet id and title", []func(map[string]any){set("spec.sheet.id", int64(0))}, "sheet needs exactly one of id and title"},
		{"a spreadsheet id with a slash", []func(map[string]any){set("spec.spreadsheetID", "1BxiMVs0XRA5/edit")}, "spec.spreadsheetID in body should match"},
	})
}

func TestSheetSyncRejects(t *testing.T) {
	runInvalid(t, "SheetSync", []invalidCase{
		{"a session that ends before it starts", []func(map[string]any){set("spec.session.endedAt", int64(1763700000000)), set("spec.session.durationSeconds", int64(0))},
			"session.endedAt must not be before session.startedAt"},
		{"a duration that disagrees with the times", []func(map[string]any){set("spec.session.durationSeconds", int64(60))},
			"session.durationSeconds must equal (endedAt - startedAt) / 1000"},
		{"a title over 256 characters", []func(map[string]any){set("spec.session.title", strings.Repeat("t", 257))}, "spec.session.title: Too long"},
		{"a negative duration", []func(map[string]any){set("spec.session.durationSeconds", int64(-1))}, "spec.session.durationSeconds in body should be greater than or equal to 0"},
		{"no session id", []func(map[string]any){del("spec.session.id")}, "spec.session.id: Required value"},
	})
}

func TestImmutableFields(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	cases := []struct {
		kind, path string
		value      any
		message    string
	}{
		{"CalendarWatch", "spec.calendarID", "team@example.com", "calendarID is immutable"},
		{"ReceiveLink", "spec.blob.key", "user_prize/owner-1/bob/prize.zip", "blob is immutable"},
		{"PaperSync", "spec.pageID", "0c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f", "PaperSync spec is immutable"},
		{"SheetSync", "spec.session.title", "Something else", "SheetSync spec is immutable"},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			u, err := create(t, ns, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			set(tc.path, tc.value)(u.Object)
			err = env.Client.Update(ctx, u)
			if err == nil || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("update of %s: got %v, want %q", tc.path, err, tc.message)
			}
		})
	}
}

func TestDefaultsAreApplied(t *testing.T) {
	ns := namespace(t)

	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns}}
	ni.Spec.OAuth.ClientSecretRef.Name = "c"
	ni.Spec.OAuth.TokenSecretRef.Name = "t"
	ni.Spec.WebhookSecretRef.Name = "w"
	mustCreateAndGet(t, ni)
	if got := ni.Spec.Database.Name; got != "ArXiv Papers" {
		t.Errorf("database.name = %q, want ArXiv Papers", got)
	}
	if a, r := ni.Spec.TokenRefresh.AssumedLifetime.Duration.String(), ni.Spec.TokenRefresh.RefreshBefore.Duration.String(); a != "168h0m0s" || r != "24h0m0s" {
		t.Errorf("tokenRefresh = %s/%s, want 168h/24h (seed 000 §3.7)", a, r)
	}
	if ni.Spec.BackfillInterval.Duration.String() != "1h0m0s" || ni.Spec.SyncRetention.Duration.String() != "24h0m0s" {
		t.Errorf("backfillInterval/syncRetention = %s/%s", ni.Spec.BackfillInterval.Duration, ni.Spec.SyncRetention.Duration)
	}

	cw := &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns}}
	cw.Spec.CalendarID = "primary"
	cw.Spec.OAuth.ClientSecretRef.Name = "c"
	cw.Spec.OAuth.TokenSecretRef.Name = "t"
	cw.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "example.com/v1", Kind: "Appointment"}
	mustCreateAndGet(t, cw)
	if cw.Spec.Channel.TTL.Duration.String() != "168h0m0s" || cw.Spec.Channel.RenewBefore.Duration.String() != "24h0m0s" {
		t.Errorf("channel = %s/%s, want 168h/24h (seed 002)", cw.Spec.Channel.TTL.Duration, cw.Spec.Channel.RenewBefore.Duration)
	}
	if cw.Spec.BackupSyncInterval.Duration.String() != "15m0s" || cw.Spec.TokenRefreshBefore.Duration.String() != "5m0s" {
		t.Errorf("backupSyncInterval/tokenRefreshBefore = %s/%s, want 15m/5m", cw.Spec.BackupSyncInterval.Duration, cw.Spec.TokenRefreshBefore.Duration)
	}
	if cw.Spec.Sink.Objects.EventIDLabel != "switchboard.dev/calendar-event-id" {
		t.Errorf("sink.objects.eventIDLabel = %q", cw.Spec.Sink.Objects.EventIDLabel)
	}

	rl := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns}}
	rl.Spec.Blob = v1alpha1.BlobLocation{Bucket: "user-prize", Key: "a/b.zip", CredentialsSecretRef: v1alpha1.SecretReference{Name: "s3"}}
	rl.Spec.TTL = &metav1.Duration{Duration: 3600e9}
	mustCreateAndGet(t, rl)
	if rl.Spec.Retention.Duration.String() != "24h0m0s" {
		t.Errorf("retention = %s, want 24h", rl.Spec.Retention.Duration)
	}

	sc := &v1alpha1.SheetConnection{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns}}
	sc.Spec.SpreadsheetID = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
	sc.Spec.Sheet.Title = "Log"
	sc.Spec.OAuth.ClientSecretRef.Name = "c"
	sc.Spec.OAuth.TokenSecretRef.Name = "t"
	sc.Spec.IngestTokenSecretRef.Name = "i"
	sc.Spec.ColumnMapping = map[string]v1alpha1.ColumnRef{"title": "A", "startedAt": "B", "endedAt": "C", "durationSeconds": "Duration"}
	mustCreateAndGet(t, sc)
	if sc.Spec.TokenRefreshBefore.Duration.String() != "5m0s" || sc.Spec.SyncRetention.Duration.String() != "168h0m0s" {
		t.Errorf("tokenRefreshBefore/syncRetention = %s/%s, want 5m (seed 004 §5)/168h", sc.Spec.TokenRefreshBefore.Duration, sc.Spec.SyncRetention.Duration)
	}
}

func mustCreateAndGet(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("create %T: %v", obj, err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func discoveryFor(t *testing.T) *discovery.DiscoveryClient {
	t.Helper()
	d, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

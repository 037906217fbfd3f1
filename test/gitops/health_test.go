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
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// TestSamplesUnderGitOps applies config/samples as a GitOps tool would and
// reads every object the way kstatus (kubectl wait, Flux, cli-utils) and
// Argo CD (the health check of docs/gitops.md) read it: Current/Healthy
// when done, InProgress/Progressing mid-work and right after each spec
// change, Failed/Degraded on a spec a person must fix, Suspended for
// spec.suspend.
func TestSamplesUnderGitOps(t *testing.T) {
	began := time.Now()
	ctx := context.Background()
	f := newFixture(t)
	objs := map[string]*unstructured.Unstructured{}
	// PaperSync goes after the rest: see below.
	first := slices.DeleteFunc(v1alpha1.Kinds(), func(k string) bool { return k == "PaperSync" })

	t.Run("every sample becomes Current", func(t *testing.T) {
		if samples, kinds := sampleKinds(t), v1alpha1.Kinds(); len(samples) != len(kinds) {
			t.Fatalf("config/samples holds %d samples (%v) for %d kinds (%v): every kind needs one", len(samples), samples, len(kinds), kinds)
		}
		// PaperSync goes last: its page lives in the database the
		// integration creates, so its pageID is only known then.
		for _, kind := range first {
			u := sample(t, f.ns, kind)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatalf("apply the %s sample: %v", kind, err)
			}
			// The create's answer holds the API server's default
			// status, observedGeneration -1: both read it as in
			// progress, before the controller has looked.
			if og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); og != -1 {
				t.Fatalf("a new %s has status.observedGeneration %d, want the default -1", kind, og)
			}
			expect(t, u, "created", status.InProgressStatus, "Progressing")
			objs[kind] = u
		}
		for _, kind := range first {
			objs[kind] = waitFor(t, objs[kind], status.CurrentStatus)
			expect(t, objs[kind], "sample", status.CurrentStatus, "Healthy")
		}
		dbID, _, _ := unstructured.NestedString(objs["NotionIntegration"].Object, "status", "databaseID")
		ps := sample(t, f.ns, "PaperSync")
		link, _, _ := unstructured.NestedString(ps.Object, "spec", "link")
		// The sample's pageID is an example; the sandbox's page with the
		// same link stands in for it.
		if err := unstructured.SetNestedField(ps.Object, notionEm.AddRow(dbID, map[string]any{"Link": link}), "spec", "pageID"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, ps); err != nil {
			t.Fatalf("apply the PaperSync sample: %v", err)
		}
		expect(t, ps, "created", status.InProgressStatus, "Progressing")
		objs["PaperSync"] = waitFor(t, ps, status.CurrentStatus)
		expect(t, objs["PaperSync"], "sample", status.CurrentStatus, "Healthy")
	})
	if t.Failed() {
		return
	}

	t.Run("observedGeneration follows every spec change", func(t *testing.T) {
		// Two successive edits of a field each kind lets change.
		changes := map[string][2]func(map[string]any){
			"SlideStock":        {func(s map[string]any) { s["memo"] = "Feed formats, week 2." }, func(s map[string]any) { s["memo"] = "Feed formats, week 3." }},
			"NotionIntegration": {func(s map[string]any) { s["backfillInterval"] = "30m" }, func(s map[string]any) { s["backfillInterval"] = "45m" }},
			"CalendarWatch":     {func(s map[string]any) { s["backupSyncInterval"] = "20m" }, func(s map[string]any) { s["backupSyncInterval"] = "25m" }},
			"ReceiveLink":       {func(s map[string]any) { s["retention"] = "2h" }, func(s map[string]any) { s["owner"] = "owner-2" }},
			"SheetConnection":   {func(s map[string]any) { s["syncRetention"] = "2h" }, func(s map[string]any) { s["tokenRefreshBefore"] = "10m" }},
		}
		for kind, edits := range changes {
			for i, change := range edits {
				mustEdit(t, objs[kind], "spec edited", change)
				objs[kind] = waitFor(t, objs[kind], status.CurrentStatus)
				if gen, observed := generations(objs[kind]); gen != int64(2+i) || observed != gen {
					t.Fatalf("%s after edit %d: generation %d, observed %d", kind, i+1, gen, observed)
				}
				expect(t, objs[kind], "edit observed", status.CurrentStatus, "Healthy")
			}
		}
		// The child kinds record one event each: their spec is immutable,
		// so the generation the controller observed stays the only one.
		for _, kind := range []string{"PaperSync", "SheetSync"} {
			if _, err := edit(t, objs[kind], func(s map[string]any) { s["pageID"], s["session"] = "changed", nil }); !isInvalid(err) {
				t.Fatalf("%s: a spec change answered %v, want a validation refusal", kind, err)
			}
			got := fetch(t, objs[kind])
			if gen, observed := generations(got); gen != 1 || observed != 1 {
				t.Fatalf("%s: generation %d, observed %d", kind, gen, observed)
			}
			expect(t, got, "edit refused", status.CurrentStatus, "Healthy")
		}
	})

	t.Run("a retry in flight is InProgress", func(t *testing.T) {
		// SpeakerDeck answers 503 until the fault is cleared: the stock
		// retries (Reconciling=True) on its 2 s schedule.
		box.SetFault(sandbox.SpeakerDeckOEmbed, sandbox.Fault{Status: 503, ContentType: "text/plain", Body: "Service Unavailable"})
		defer box.ClearFault(sandbox.SpeakerDeckOEmbed)
		u := sample(t, f.ns, "SlideStock")
		u.SetName("atom-retrying")
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		var got *unstructured.Unstructured
		testenv.EventuallyReport(t, 20*time.Second, "Reconciling=True", func() (bool, string) {
			got = fetch(t, u)
			if st, _ := condition(got, v1alpha1.ReconcilingCondition); st == "True" {
				return true, ""
			}
			ready, _ := condition(got, v1alpha1.ReadyCondition)
			return false, "Ready " + ready
		})
		expect(t, got, "retrying", status.InProgressStatus, "Progressing")
		box.ClearFault(sandbox.SpeakerDeckOEmbed)
		// Ask for the fetch now rather than at the next backoff step, as a
		// person would once the provider is back.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := fetch(t, u)
			cur.SetAnnotations(map[string]string{v1alpha1.RequestedAtAnnotation: time.Now().Format(time.RFC3339Nano)})
			return env.Client.Update(ctx, cur)
		}); err != nil {
			t.Fatal(err)
		}
		expect(t, waitFor(t, u, status.CurrentStatus), "retried", status.CurrentStatus, "Healthy")
	})

	t.Run("a spec a person must fix is Failed until fixed", func(t *testing.T) {
		type broken struct {
			kind, name string
			reason     string // the Stalled reason the controller gives
			breakIt    func(map[string]any)
			fix        func(map[string]any) // nil: the spec is immutable; a person recreates it
		}
		now := time.Now().UTC()
		cases := []broken{
			{"SlideStock", "atom-missing", v1alpha1.UpstreamRejectedReason, func(s map[string]any) { s["url"] = "https://speakerdeck.com/jnunemaker/no-such-deck" },
				func(s map[string]any) { s["url"] = "https://speakerdeck.com/jnunemaker/atom" }},
			{"NotionIntegration", "research-2", v1alpha1.SecretNotFoundReason, func(s map[string]any) {
				s["oauth"] = map[string]any{"clientSecretRef": map[string]any{"name": "no-such-client"}, "tokenSecretRef": map[string]any{"name": "notion-token-2"}}
				s["webhookSecretRef"] = map[string]any{"name": "notion-webhook-2"}
			}, func(s map[string]any) {
				s["oauth"].(map[string]any)["clientSecretRef"] = map[string]any{"name": "notion-client"}
			}},
			{"CalendarWatch", "visits-2", v1alpha1.SecretNotFoundReason, func(s map[string]any) {
				s["oauth"] = map[string]any{"clientSecretRef": map[string]any{"name": "no-such-client"}, "tokenSecretRef": map[string]any{"name": "calendar-token-2"}}
			}, func(s map[string]any) {
				s["oauth"].(map[string]any)["clientSecretRef"] = map[string]any{"name": "google-client"}
			}},
			{"ReceiveLink", "prize-bob", v1alpha1.ExpiryTooFarReason, func(s map[string]any) {
				delete(s, "ttl")
				s["expiresAt"] = now.Add(20 * 24 * time.Hour).Format(time.RFC3339)
				s["blob"].(map[string]any)["key"] = "user_prize/owner-1/bob/prize.zip"
				s["receiver"] = map[string]any{"name": "bob"}
			}, func(s map[string]any) { s["expiresAt"] = now.Add(7 * 24 * time.Hour).Format(time.RFC3339) }},
			{"SheetConnection", "timesheet-2", sheetconnection.HeadersMissingReason, func(s map[string]any) {
				s["oauth"].(map[string]any)["tokenSecretRef"] = map[string]any{"name": "google-token-2"}
				s["ingestTokenSecretRef"] = map[string]any{"name": "sheet-ingest-2"}
				s["columnMapping"].(map[string]any)["project"] = "Projekt"
			}, func(s map[string]any) { s["columnMapping"].(map[string]any)["project"] = "Project" }},
			{"PaperSync", "research-2301-99999", v1alpha1.PaperNotFoundReason, func(s map[string]any) {
				s["link"], s["arxivID"] = "https://arxiv.org/abs/2301.99999", "2301.99999"
				dbID, _, _ := unstructured.NestedString(objs["NotionIntegration"].Object, "status", "databaseID")
				s["pageID"] = notionEm.AddRow(dbID, map[string]any{"Link": "https://arxiv.org/abs/2301.99999"})
			}, nil},
		}
		for _, c := range cases {
			u := sample(t, f.ns, c.kind)
			u.SetName(c.name)
			spec, _ := u.Object["spec"].(map[string]any)
			c.breakIt(spec)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatalf("create %s %s: %v", c.kind, c.name, err)
			}
			got := waitFor(t, u, status.FailedStatus)
			if st, reason := condition(got, v1alpha1.StalledCondition); st != "True" || reason != c.reason {
				t.Fatalf("%s %s is Failed with Stalled=%s (%s), want True (%s)", c.kind, c.name, st, reason, c.reason)
			}
			expect(t, got, "spec error", status.FailedStatus, "Degraded")
			if c.fix == nil {
				continue
			}
			mustEdit(t, u, "spec fixed", c.fix)
			got = waitFor(t, u, status.CurrentStatus)
			if gen, observed := generations(got); gen != 2 || observed != 2 {
				t.Fatalf("%s %s after the fix: generation %d, observed %d", c.kind, c.name, gen, observed)
			}
			expect(t, got, "fixed", status.CurrentStatus, "Healthy")
		}
	})

	t.Run("a sync Google refuses is Failed", func(t *testing.T) {
		// A SheetSync's spec is the accepted session, which no person
		// edits; it fails when Google refuses the append for good.
		box.SetFault(sandbox.SheetsValuesAppend, sandbox.Fault{Status: 400,
			Body: `{"error":{"code":400,"message":"Invalid values[0][0]","status":"INVALID_ARGUMENT"}}`})
		defer box.ClearFault(sandbox.SheetsValuesAppend)
		u := sample(t, f.ns, "SheetSync")
		u.SetName("timesheet-refused")
		if err := unstructured.SetNestedField(u.Object, "4a3b2c1d-0000-4000-8000-000000000001", "spec", "session", "id"); err != nil {
			t.Fatal(err)
		}
		// Another session, also by what it says: the sample's sheet has no
		// id column, and a SheetSync first looks its session up there by
		// title and times (docs/sheetsync.md), where the sample's own
		// session already has a row.
		if err := unstructured.SetNestedField(u.Object, "A session Google refuses", "spec", "session", "title"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		got := waitFor(t, u, status.FailedStatus)
		if st, reason := condition(got, v1alpha1.StalledCondition); st != "True" || reason != sheetsync.AppendFailedReason {
			t.Fatalf("the refused sync: Stalled=%s (%s)", st, reason)
		}
		expect(t, got, "refused", status.FailedStatus, "Degraded")
	})

	t.Run("spec.suspend is Suspended for Argo CD", func(t *testing.T) {
		suspendable := slices.DeleteFunc(slices.Clone(first), func(k string) bool { return !hasSpecField(t, k, "Suspend") })
		for _, kind := range suspendable {
			got, err := edit(t, objs[kind], func(s map[string]any) { s["suspend"] = true })
			if err != nil {
				t.Fatal(err)
			}
			// Before the controller has looked, and after: Argo CD shows
			// Suspended from the spec. kstatus has no such status: Ready
			// is False (reason Suspended), which it reads as InProgress.
			if health, _ := argoHealth(t, argoScripts(t)[kind], got); health != "Suspended" {
				t.Fatalf("%s: a suspended object's answer is %s", kind, health)
			}
			got = waitFor(t, got, status.InProgressStatus)
			if st, reason := condition(got, v1alpha1.ReadyCondition); st != "False" || reason != v1alpha1.SuspendedReason {
				t.Fatalf("%s suspended: Ready %s (%s)", kind, st, reason)
			}
			expect(t, got, "suspended", status.InProgressStatus, "Suspended")
		}
		// Resuming brings them back (SheetConnection excepted: suspending
		// it disconnects, seed 004 §4, and only a new grant resumes it).
		for _, kind := range slices.DeleteFunc(suspendable, func(k string) bool { return k == "SheetConnection" }) {
			mustEdit(t, objs[kind], "resumed", func(s map[string]any) { delete(s, "suspend") })
			expect(t, waitFor(t, objs[kind], status.CurrentStatus), "resumed", status.CurrentStatus, "Healthy")
		}
	})

	t.Logf("states seen (state=kstatus/Argo CD) in %s:\n%s", time.Since(began).Round(time.Millisecond), seen)
}

// TestKstatusCallsAnObjectWithoutStatusCurrent records the kstatus rule
// the CRDs' status default works around: an object with no status at all
// (as a client that strips defaults would show it) has no conditions, and
// kstatus then assumes Current. Argo CD's check says Progressing for it.
func TestKstatusCallsAnObjectWithoutStatusCurrent(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "switchboard.dev/v1alpha1", "kind": "SlideStock",
		"metadata": map[string]any{"name": "deck", "generation": int64(1), "creationTimestamp": metav1.Now().UTC().Format(time.RFC3339)},
		"spec":     map[string]any{"url": "https://speakerdeck.com/jnunemaker/atom"}}}
	expect(t, u, "no status", status.CurrentStatus, "Progressing")
}

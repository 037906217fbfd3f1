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

package receivelink_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/audit/audittest"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
)

// Seed 003 known issue 4 on the record that outlives Events: a link's
// issue and its expiry are one audit line each, whatever the reconciles
// around them, and no line holds a token or the share URL.
func TestALinkIsAuditedOnceIssuedAndOnceExpired(t *testing.T) {
	facts := audittest.Capture(t)
	f := newFixture(t, nil)
	blobKey := f.upload(t, "prize.zip")
	key := f.link(t, "prize", blobKey, func(l *v1alpha1.ReceiveLink) {
		l.Spec.Owner = "owner-1"
		l.Spec.Receiver = v1alpha1.Receiver{Name: "alice", DiscordUserID: "123456789012345678"}
	})
	f.reconcile(t, key)
	f.reconcile(t, key) // mints nothing more
	exp := get(t, key).Status.ExpiresAt.Time
	issued := facts.One(t, audit.LinkIssued, f.ns)
	audittest.Want(t, issued, map[string]any{"kind": "ReceiveLink", "name": "prize", "owner": "owner-1", "receiver": "alice",
		"receiverDiscordUserID": "123456789012345678", "blob": "s3://" + bucket + "/" + blobKey,
		"expiresAt": exp.UTC().Format(time.RFC3339), "shareSecret": "prize-share"})
	share := f.share(t, key)
	if n := len(facts.Of(audit.LinkExpired, f.ns)); n != 0 {
		t.Fatalf("%d expiries audited before the expiry", n)
	}

	f.clock.SetTime(exp)
	f.reconcile(t, key)
	f.reconcile(t, key) // expires nothing more
	expired := facts.One(t, audit.LinkExpired, f.ns)
	audittest.Want(t, expired, map[string]any{"kind": "ReceiveLink", "name": "prize", "owner": "owner-1",
		"blob": "s3://" + bucket + "/" + blobKey, "expiresAt": exp.UTC().Format(time.RFC3339), "reason": v1alpha1.ExpiredReason})
	if get(t, key).Status.Phase != v1alpha1.LinkExpired {
		t.Fatal("the link is not Expired")
	}
	text := facts.Text()
	for _, k := range []string{linktoken.ShareShortToken, linktoken.ShareLongToken, linktoken.ShareURL} {
		if v := string(share[k]); len(v) < 10 || strings.Contains(text, v) {
			t.Errorf("the audit record holds the share Secret's %s (or it is too short to tell: %q)", k, v)
		}
	}
	if n := len(facts.Of(audit.LinkIssued, f.ns)); n != 1 {
		t.Errorf("%d issues audited, want still 1", n)
	}
}

// A link that was never live is expired without deleting its blob: one
// expiry with the reason NeverLive, and no issue.
func TestALinkNeverLiveIsAuditedExpiredWithItsReason(t *testing.T) {
	facts := audittest.Capture(t)
	f := newFixture(t, nil)
	key := f.link(t, "typo", f.upload(t, "typo.zip"), func(l *v1alpha1.ReceiveLink) {
		l.Spec.TTL = nil
		l.Spec.ExpiresAt = &metav1.Time{Time: time.Now().Add(-24 * time.Hour).Truncate(time.Second)}
		l.Spec.Retention = metav1.Duration{Duration: time.Hour}
	})
	f.reconcile(t, key)
	f.reconcile(t, key)
	audittest.Want(t, facts.One(t, audit.LinkExpired, f.ns), map[string]any{"name": "typo", "reason": v1alpha1.NeverLiveReason})
	if n := len(facts.Of(audit.LinkIssued, f.ns)); n != 0 {
		t.Errorf("%d issues audited for a link never minted", n)
	}
}

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

package receive_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/audit/audittest"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// Seed 003 known issue 4 end to end: the manager records the link it
// issued, the webhook each resolve and each download, once each, on the
// record that outlives the link's Events.
func TestWhoIssuedAndWhoUsedALinkIsAuditedOnceEach(t *testing.T) {
	facts := audittest.Capture(t)
	ns, _ := env.Namespace("rcv")
	_, short := share(t, ns, "prize", "the prize bytes", func(l *v1alpha1.ReceiveLink) { l.Spec.Owner = "owner-1" })
	testenv.Eventually(t, "the manager audited the link it issued", func() bool { return len(facts.Of(audit.LinkIssued, ns)) > 0 })
	audittest.Want(t, facts.One(t, audit.LinkIssued, ns), map[string]any{"name": "prize", "owner": "owner-1", "shareSecret": "prize-share"})

	c := noRedirects(t)
	if resp := resolveWhenCached(t, c, short); resp.StatusCode != http.StatusFound {
		t.Fatalf("resolve = %d", resp.StatusCode)
	}
	want := map[string]any{"kind": "ReceiveLink", "name": "prize", "owner": "owner-1", "discordUserID": "", "sourceAddress": "127.0.0.1"}
	resolved, downloaded := facts.One(t, audit.LinkResolved, ns), facts.One(t, audit.LinkDownloaded, ns)
	audittest.Want(t, resolved, want)
	audittest.Want(t, resolved, map[string]any{"outcome": audit.OutcomeAllowed})
	audittest.Want(t, downloaded, want)

	get(t, c, hookURL+"/r/"+short)
	if r, d := len(facts.Of(audit.LinkResolved, ns)), len(facts.Of(audit.LinkDownloaded, ns)); r != 2 || d != 2 {
		t.Fatalf("after a second resolve: %d resolves, %d downloads audited, want 2 and 2", r, d)
	}
	if strings.Contains(facts.Text(), short) {
		t.Fatal("the short token is in the audit record")
	}
}

// A link for one Discord user: the stranger's sign-in and refusal and the
// receiver's sign-in and download are each a fact naming the Discord user
// once signed in; only the receiver downloads. No line holds a cookie, an
// OAuth state or code, or the short token.
func TestALinkForADiscordUserAuditsWhoAskedAndWhoDownloaded(t *testing.T) {
	facts := audittest.Capture(t)
	ns, _ := env.Namespace("rcv")
	const alice, mallory = "123456789012345678", "987654321098765432"
	_, short := share(t, ns, "for-alice", "alice's prize", func(l *v1alpha1.ReceiveLink) { l.Spec.Receiver.DiscordUserID = alice })
	var secrets []string
	follow := func(c *http.Client, u string) *http.Response {
		t.Helper()
		r, _ := get(t, c, u)
		if loc, err := url.Parse(r.Header.Get("Location")); err == nil {
			for _, k := range []string{"state", "code", "code_challenge"} {
				if v := loc.Query().Get(k); v != "" {
					secrets = append(secrets, v)
				}
			}
		}
		return r
	}
	signIn := func(user sandbox.DiscordUser) *http.Client {
		t.Helper()
		discordEm.SetConsentUser(user)
		c := noRedirects(t)
		first := resolveWhenCached(t, c, short) // → Discord
		cb := follow(c, first.Header.Get("Location"))
		follow(c, cb.Header.Get("Location")) // the callback: a session
		return c
	}
	m := signIn(sandbox.DiscordUser{ID: mallory, Username: "mallory"})
	if r := follow(m, hookURL+"/r/"+short); r.StatusCode != http.StatusForbidden {
		t.Fatalf("mallory = %d, want 403", r.StatusCode)
	}
	a := signIn(sandbox.DiscordUser{ID: alice, Username: "alice"})
	if r := follow(a, hookURL+"/r/"+short); r.StatusCode != http.StatusFound {
		t.Fatalf("alice = %d, want 302", r.StatusCode)
	}

	var got [][2]any
	for _, l := range facts.Of(audit.LinkResolved, ns) {
		audittest.CheckSchema(t, l)
		got = append(got, [2]any{l["outcome"], l["discordUserID"]})
	}
	want := [][2]any{{audit.OutcomeSignIn, ""}, {audit.OutcomeOtherUser, mallory}, {audit.OutcomeSignIn, ""}, {audit.OutcomeAllowed, alice}}
	if !slices.Equal(got, want) {
		t.Errorf("resolves audited (outcome, Discord user): %v, want %v", got, want)
	}
	audittest.Want(t, facts.One(t, audit.LinkDownloaded, ns), map[string]any{"name": "for-alice", "discordUserID": alice})

	u, _ := url.Parse(hookURL)
	for _, c := range []*http.Client{m, a} {
		for _, ck := range c.Jar.Cookies(u) {
			secrets = append(secrets, ck.Value)
		}
	}
	if len(secrets) < 4 {
		t.Fatalf("only %d cookies, states and codes to look for: the scan would prove little", len(secrets))
	}
	text := facts.Text()
	for _, s := range append(secrets, short) {
		if len(s) >= 8 && strings.Contains(text, s) {
			t.Errorf("the audit record holds %q (a cookie, an OAuth state or code, or the short token)", s)
		}
	}
}

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

package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/audit/audittest"
	"github.com/switchboard-dev/switchboard/internal/setup"
)

// full is a fact with every field set, so that a line shows which of them
// its schema writes.
func full(name audit.FactName) audit.Fact {
	return audit.Fact{Fact: name, Kind: "Kind", Namespace: "ns", Name: "obj",
		Source: "source", EventID: "event", Reason: "reason", DeletedAPIVersion: "v1", DeletedKind: "ConfigMap", DeletedName: "appt", DeletedUID: "uid",
		Owner: "owner", Receiver: "alice", ReceiverDiscordUserID: "123", Blob: "s3://b/k", ShareSecret: "obj-share",
		ExpiresAt: time.Date(2026, 12, 1, 15, 0, 0, 0, time.FixedZone("JST", 9*3600)), DiscordUserID: "456", SourceAddress: "192.0.2.1", Outcome: "allowed",
		Target: "calendar", Provider: "google", SignUp: "lab", TokenSecret: "google-token", Action: "Refresh", Connection: "sheet", Row: 7}
}

// The lines are the binaries' own: the zap JSON of setup.NewLogger, on the
// logger "audit", each with exactly its schema's keys; each fact counts
// once in its series.
func TestEachFactIsOneJSONLineOnTheAuditLoggerWithItsSchemaAndCounts(t *testing.T) {
	var buf bytes.Buffer
	reg := prometheus.NewRegistry()
	if err := audit.Setup(setup.NewLogger(&zap.Options{DestWriter: &buf}), reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = audit.Setup(setup.NewLogger(&zap.Options{DestWriter: &bytes.Buffer{}}), nil) })
	counter := func(f audit.FactName) float64 {
		t.Helper()
		return count(t, reg, f)
	}
	for _, f := range audit.Facts() {
		if got := counter(f); got != 0 {
			t.Fatalf("%s counts %v before any fact", f, got)
		}
	}
	audit.Record(context.Background(), full(audit.LinkIssued))
	audit.Record(context.Background(), full(audit.LinkIssued))
	audit.Record(context.Background(), full(audit.OAuthRevoked))
	audit.Record(context.Background(), audit.Fact{Fact: "link.shared"}) // none of the facts
	if counter(audit.LinkIssued) != 2 || counter(audit.OAuthRevoked) != 1 || counter(audit.LinkExpired) != 0 {
		t.Errorf("counts: issued %v, revoked %v, expired %v", counter(audit.LinkIssued), counter(audit.OAuthRevoked), counter(audit.LinkExpired))
	}
	buf.Reset()
	for _, f := range audit.Facts() {
		audit.Record(context.Background(), full(f))
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(audit.Facts()) {
		t.Fatalf("%d lines for %d facts:\n%s", len(lines), len(audit.Facts()), buf.String())
	}
	for i, f := range audit.Facts() {
		var m map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &m); err != nil {
			t.Fatalf("line %q: %v", lines[i], err)
		}
		if m["logger"] != "audit" || m["msg"] != string(f) || m["fact"] != string(f) || m["level"] != "info" {
			t.Errorf("line %v", m)
		}
		for _, k := range []string{"level", "ts", "logger", "msg"} {
			delete(m, k)
		}
		got := slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		})
		if want := slices.Sorted(slices.Values(audit.Keys(f))); !slices.Equal(got, want) {
			t.Errorf("%s: keys %v, want %v", f, got, want)
		}
	}
	if !strings.Contains(lines[slices.Index(audit.Facts(), audit.LinkIssued)], `"expiresAt":"2026-12-01T06:00:00Z"`) {
		t.Errorf("expiresAt is not RFC 3339 in UTC: %s", buf.String())
	}
}

// count is the value of f's series in reg.
func count(t *testing.T, reg *prometheus.Registry, f audit.FactName) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != audit.MetricName {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == string(f) {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series %s{fact=%q}", audit.MetricName, f)
	return 0
}

// No field of a fact can carry a secret: each is a string, a time or a
// number the package writes as it is, and no key names a token, a code, a
// session, a URL or a signature. A new field fails here until it is
// listed, and docs/audit.md describes it.
func TestNoFieldCanHoldASecret(t *testing.T) {
	allowed := []string{"Fact", "Kind", "Namespace", "Name", "Source", "EventID", "Reason", "DeletedAPIVersion", "DeletedKind", "DeletedName", "DeletedUID",
		"Owner", "Receiver", "ReceiverDiscordUserID", "Blob", "ShareSecret", "ExpiresAt", "DiscordUserID", "SourceAddress", "Outcome",
		"Target", "Provider", "SignUp", "TokenSecret", "Action", "Connection", "Row"}
	typ := reflect.TypeFor[audit.Fact]()
	var fields []string
	for f := range typ.Fields() {
		fields = append(fields, f.Name)
		switch f.Type {
		case reflect.TypeFor[string](), reflect.TypeFor[audit.FactName](), reflect.TypeFor[time.Time](), reflect.TypeFor[int]():
		default:
			t.Errorf("field %s is a %s: only strings, times and numbers", f.Name, f.Type)
		}
	}
	if !slices.Equal(fields, allowed) {
		t.Errorf("fields %v, want %v", fields, allowed)
	}
	secretish := regexp.MustCompile(`(?i)(token|code|sid|session|sessionid|url|uri|signature|verifier|state|password|key)$`)
	for _, f := range audit.Facts() {
		for _, k := range audit.Keys(f) {
			if secretish.MatchString(k) {
				t.Errorf("%s writes the key %q", f, k)
			}
		}
	}
}

// docs/audit.md names every fact, every key and the logger and metric,
// so that the page cannot fall behind the code.
func TestTheDocsDescribeEveryFactAndKey(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, s := range []string{"`" + audit.MetricName + "`", `"logger":"audit"`, audit.SourceCalendarSync} {
		if !strings.Contains(doc, s) {
			t.Errorf("docs/audit.md does not mention %s", s)
		}
	}
	for _, f := range audit.Facts() {
		section := "### `" + string(f) + "`"
		i := strings.Index(doc, section)
		if i < 0 {
			t.Errorf("docs/audit.md has no section %s", section)
			continue
		}
		body := doc[i+len(section):]
		if j := strings.Index(body, "\n### "); j >= 0 {
			body = body[:j]
		}
		for _, k := range audit.Keys(f)[len(audit.CommonKeys):] {
			if !strings.Contains(body, "`"+k+"`") {
				t.Errorf("docs/audit.md's %s does not describe `%s`", section, k)
			}
		}
	}
}

// Each capture sees every fact recorded while it runs, and none after.
func TestCapturesSeeTheFactsOfTheirTime(t *testing.T) {
	var before *audittest.Facts
	t.Run("capture", func(t *testing.T) {
		before = audittest.Capture(t)
		inner := audittest.Capture(t)
		audit.Record(context.Background(), full(audit.LinkExpired))
		for _, c := range []*audittest.Facts{before, inner} {
			line := c.One(t, audit.LinkExpired, "ns")
			audittest.Want(t, line, map[string]any{"kind": "Kind", "name": "obj", "owner": "owner", "blob": "s3://b/k", "reason": "reason"})
		}
	})
	audit.Record(context.Background(), full(audit.LinkExpired))
	if n := len(before.Of(audit.LinkExpired, "ns")); n != 1 {
		t.Errorf("a stopped capture holds %d facts, want the 1 of its time", n)
	}
}

func TestKindOfTypedObjects(t *testing.T) {
	if k := audit.KindOf(&corev1.ConfigMap{}); k != "ConfigMap" {
		t.Errorf("KindOf(ConfigMap) = %q", k)
	}
	if k := audit.KindOf(&v1alpha1.ReceiveLink{}); k != "ReceiveLink" {
		t.Errorf("KindOf(ReceiveLink) = %q", k)
	}
	s := audit.SubjectOf(&v1alpha1.CalendarWatch{})
	if s.Kind != "CalendarWatch" {
		t.Errorf("SubjectOf(CalendarWatch) = %+v", s)
	}
}

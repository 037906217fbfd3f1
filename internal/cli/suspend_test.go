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

package cli_test

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// TestSuspendAndResumeSetSpecSuspend on every kind that has it.
func TestSuspendAndResumeSetSpecSuspend(t *testing.T) {
	ns := namespace(t)
	objs := map[string]v1alpha1.Suspendable{
		"notion/research":     create(t, ns, "research", &v1alpha1.NotionIntegration{}),
		"calwatch/visits":     create(t, ns, "visits", &v1alpha1.CalendarWatch{}),
		"sheetconn/timesheet": create(t, ns, "timesheet", &v1alpha1.SheetConnection{}),
		"slidestock/deck":     create(t, ns, "deck", &v1alpha1.SlideStock{}),
	}
	for arg, obj := range objs {
		co := obj.(client.Object)
		for _, step := range []struct {
			verb, said string
			want       bool
		}{{"suspend", "suspended", true}, {"resume", "resumed", false}} {
			r := run(t, ns, step.verb, arg).ok(t)
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(co), co); err != nil {
				t.Fatal(err)
			}
			if obj.IsSuspended() != step.want {
				t.Errorf("%s %s: spec.suspend is %v, want %v", step.verb, arg, obj.IsSuspended(), step.want)
			}
			if !strings.Contains(r.stdout, step.said) {
				t.Errorf("%s %s printed %q", step.verb, arg, r.stdout)
			}
		}
	}
}

// TestSuspendRefusesKindsWithoutSpecSuspend names the kinds that can be
// suspended.
func TestSuspendRefusesKindsWithoutSpecSuspend(t *testing.T) {
	ns := namespace(t)
	paper := create(t, ns, "research-2301-12345", &v1alpha1.PaperSync{})
	for _, verb := range []string{"suspend", "resume"} {
		r := run(t, ns, verb, "paper/"+paper.Name).
			fails(t, "cannot "+verb+" a PaperSync", "CalendarWatch (calwatch)", "NotionIntegration (notion)", "SheetConnection (sheetconn)", "SlideStock (stock, stocks)")
		if strings.Contains(r.stderr, "ReceiveLink") {
			t.Errorf("ReceiveLink is listed as a kind that can be suspended:\n%s", r.stderr)
		}
	}
	run(t, ns, "suspend", "notion/nowhere").fails(t, "notionintegration/nowhere not found in namespace "+ns)
}

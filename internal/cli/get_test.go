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
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/cli"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// TestGetListsEveryKindWithReadyReasonAndMessage: one namespace by
// default, every namespace with -A, one kind by any of its names.
func TestGetListsEveryKindWithReadyReasonAndMessage(t *testing.T) {
	ns, other := namespace(t), namespace(t)
	deck := create(t, ns, "deck", &v1alpha1.SlideStock{})
	setStatus(t, deck, func(s *v1alpha1.SlideStock) {
		ready("fetched Switchboard at SpeakerDeck")(&s.Status.ReconcileStatus, s.Generation)
	})
	link := create(t, ns, "prize", &v1alpha1.ReceiveLink{})
	setStatus(t, link, func(l *v1alpha1.ReceiveLink) {
		condition(&l.Status.ReconcileStatus, v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.BlobNotFoundReason, "no object at s3://files/prize.zip")
	})
	create(t, ns, "research", &v1alpha1.NotionIntegration{})
	create(t, other, "visits", &v1alpha1.CalendarWatch{})

	r := run(t, ns, "get").ok(t)
	if got := strings.Fields(lines(r.stdout)[0]); !slices.Equal(got, []string{"KIND", "NAME", "READY", "REASON", "AGE", "MESSAGE"}) {
		t.Errorf("header %v", got)
	}
	if n := len(lines(r.stdout)); n != 4 {
		t.Errorf("%d lines, want a header and 3 objects:\n%s", n, r.stdout)
	}
	if f := row(t, r.stdout, "SlideStock", "deck", "True", "Succeeded"); strings.Join(f[5:], " ") != "fetched Switchboard at SpeakerDeck" {
		t.Errorf("deck's message: %v", f)
	}
	if f := row(t, r.stdout, "ReceiveLink", "prize", "False", "BlobNotFound"); strings.Join(f[5:], " ") != "no object at s3://files/prize.zip" {
		t.Errorf("prize's message: %v", f)
	}
	row(t, r.stdout, "NotionIntegration", "research", "Unknown", "-")
	if strings.Contains(r.stdout, "visits") {
		t.Errorf("another namespace's object is listed:\n%s", r.stdout)
	}

	r = run(t, ns, "get", "-A").ok(t)
	if !strings.HasPrefix(r.stdout, "NAMESPACE") {
		t.Errorf("-A lists no NAMESPACE column:\n%s", r.stdout)
	}
	row(t, r.stdout, ns, "SlideStock", "deck", "True")
	row(t, r.stdout, other, "CalendarWatch", "visits", "Unknown")

	for _, name := range []string{"stock", "SlideStocks", "slidestock.switchboard.dev"} {
		r = run(t, ns, "get", name).ok(t)
		if n := len(lines(r.stdout)); n != 2 {
			t.Errorf("get %s: %d lines, want a header and the deck:\n%s", name, n, r.stdout)
		}
		row(t, r.stdout, "SlideStock", "deck")
	}

	r = run(t, namespace(t), "get").ok(t)
	if r.stdout != "" || !strings.Contains(r.stderr, "No Switchboard objects found in namespace") {
		t.Errorf("an empty namespace: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	r = run(t, ns, "get", "deployments").fails(t, `"deployments" is not a Switchboard kind`)
	for _, k := range v1alpha1.Kinds() {
		if !strings.Contains(r.stderr, k) {
			t.Errorf("the unknown-kind error does not list %s:\n%s", k, r.stderr)
		}
	}
}

// TestTheNamespaceComesFromTheContext: without -n, the kubeconfig
// context's namespace is the one listed, as with kubectl.
func TestTheNamespaceComesFromTheContext(t *testing.T) {
	ns := namespace(t)
	create(t, ns, "deck", &v1alpha1.SlideStock{})
	path := testenv.Kubeconfig(t, env.Config)
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ns
	withNS := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, withNS); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	code := cli.Main(t.Context(), []string{"get", "--kubeconfig", withNS}, cli.Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	row(t, out.String(), "SlideStock", "deck")
}

// TestTreeShowsAParentWithItsChildren: the children the operator
// labelled and those made by hand without the label, but not another
// parent's; each with its Ready status and reason.
func TestTreeShowsAParentWithItsChildren(t *testing.T) {
	ns := namespace(t)
	ni := create(t, ns, "research", &v1alpha1.NotionIntegration{})
	setStatus(t, ni, func(ni *v1alpha1.NotionIntegration) {
		ready("connected to Acme")(&ni.Status.ReconcileStatus, ni.Generation)
	})
	paper := func(name, integration string, label bool) *v1alpha1.PaperSync {
		return create(t, ns, name, &v1alpha1.PaperSync{}, func(p *v1alpha1.PaperSync) {
			p.Spec.IntegrationRef.Name = integration
			if label {
				p.Labels = map[string]string{papers.IntegrationLabel: integration}
			}
		})
	}
	found := paper("research-a", "research", true)
	setStatus(t, found, func(p *v1alpha1.PaperSync) {
		ready("page filled")(&p.Status.ReconcileStatus, p.Generation)
	})
	missing := paper("research-b", "research", false)
	setStatus(t, missing, func(p *v1alpha1.PaperSync) {
		condition(&p.Status.ReconcileStatus, v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.PaperNotFoundReason, "arXiv has no paper 2301.99999")
	})
	paper("other-a", "other", true)
	paper("other-b", "other", false)

	r := run(t, ns, "tree", "notion/research").ok(t)
	ls := lines(r.stdout)
	if len(ls) != 4 {
		t.Fatalf("%d lines, want a header, the integration and its 2 PaperSyncs:\n%s", len(ls), r.stdout)
	}
	row(t, ls[1], "NotionIntegration/research", "True", "Succeeded")
	row(t, r.stdout, "├──", "PaperSync/research-a", "True", "Succeeded")
	row(t, r.stdout, "└──", "PaperSync/research-b", "False", "PaperNotFound")
	if strings.Contains(r.stdout, "other-") {
		t.Errorf("another integration's PaperSyncs are shown:\n%s", r.stdout)
	}

	conn := create(t, ns, "timesheet", &v1alpha1.SheetConnection{})
	create(t, ns, "timesheet-1", &v1alpha1.SheetSync{}, func(s *v1alpha1.SheetSync) {
		s.Spec.ConnectionRef.Name = conn.Name
		s.Labels = map[string]string{timesheet.ConnectionLabel: conn.Name}
	})
	r = run(t, ns, "tree", "sheetconn", "timesheet").ok(t)
	row(t, r.stdout, "SheetConnection/timesheet", "Unknown")
	row(t, r.stdout, "└──", "SheetSync/timesheet-1", "Unknown")

	create(t, ns, "lonely", &v1alpha1.NotionIntegration{})
	r = run(t, ns, "tree", "notion/lonely").ok(t)
	if len(lines(r.stdout)) != 2 || !strings.Contains(r.stderr, "notionintegration/lonely has no PaperSyncs") {
		t.Errorf("an integration without PaperSyncs:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}

	run(t, ns, "tree", "slidestock/deck").fails(t, "a SlideStock has no children", "NotionIntegration (its PaperSyncs)", "SheetConnection (its SheetSyncs)")
	run(t, ns, "tree", "notion/nowhere").fails(t, "notionintegration/nowhere not found")
}

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

package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/papers"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
)

// pageSize is how many objects one list request asks for, as kubectl's
// --chunk-size: a namespace of many thousand PaperSyncs is read in pages.
const pageSize = 500

func (r *root) getCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "get [KIND]",
		Short: "List Switchboard objects with their Ready status, reason and message",
		Long: `Get lists every Switchboard object of the namespace (every namespace with
-A), or those of one KIND, with its Ready condition's status, reason and
message, as flux get does. An object without a Ready condition has not been
reconciled yet.`,
		Example: `  # Every Switchboard object in the current namespace
  kubectl switchboard get

  # Every NotionIntegration in every namespace
  kubectl switchboard get notion -A`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := r.session()
			if err != nil {
				return err
			}
			ks := s.kinds
			if len(args) == 1 {
				k, err := s.kinds.lookup(args[0])
				if err != nil {
					return err
				}
				ks = kinds{k}
			}
			return s.list(cmd.Context(), ks, all)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the objects of every namespace")
	return cmd
}

// row is one object in a table.
type row struct {
	namespace, name string
	kind            kind
	ready           readiness
	created         time.Time
}

func rowOf(k kind, o client.Object) row {
	return row{namespace: o.GetNamespace(), name: o.GetName(), kind: k, ready: readyOf(o), created: o.GetCreationTimestamp().Time}
}

// list prints the objects of ks, of the session's namespace or of all.
func (s *session) list(ctx context.Context, ks kinds, all bool) error {
	var rows []row
	for _, k := range ks {
		opts := []client.ListOption{}
		if !all {
			opts = append(opts, client.InNamespace(s.namespace))
		}
		objs, err := s.listAll(ctx, k, opts...)
		if err != nil {
			return err
		}
		for _, o := range objs {
			rows = append(rows, rowOf(k, o))
		}
	}
	if len(rows) == 0 {
		where := "namespace " + s.namespace
		if all {
			where = "any namespace"
		}
		fmt.Fprintf(s.errOut(), "No Switchboard objects found in %s.\n", where)
		return nil
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(strings.Compare(a.namespace, b.namespace), strings.Compare(a.kind.Kind, b.kind.Kind), strings.Compare(a.name, b.name))
	})
	tw := tabwriter.NewWriter(s.out(), 0, 4, 2, ' ', 0)
	header := "KIND\tNAME\tREADY\tREASON\tAGE\tMESSAGE"
	if all {
		header = "NAMESPACE\t" + header
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		if all {
			fmt.Fprintf(tw, "%s\t", r.namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.kind.Kind, r.name, r.ready.Status, dash(r.ready.Reason), s.age(r.created), r.ready.Message)
	}
	return tw.Flush()
}

// listAll lists the objects of kind k page by page.
func (s *session) listAll(ctx context.Context, k kind, opts ...client.ListOption) ([]client.Object, error) {
	var out []client.Object
	cont := ""
	for {
		list, err := s.newList(k)
		if err != nil {
			return nil, err
		}
		if err := s.client.List(ctx, list, append(opts, client.Limit(pageSize), client.Continue(cont))...); err != nil {
			return nil, fmt.Errorf("list %s: %w", k.Plural, err)
		}
		objs, err := items(list)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		if cont = list.GetContinue(); cont == "" {
			return out, nil
		}
	}
}

func (s *session) age(t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(s.opts.Now().Sub(t))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// family is a parent kind's children: the kind, the label the operator
// puts on the children it creates (papers.IntegrationLabel), and the
// parent a child names in its spec, which decides.
type family struct {
	child  string
	label  string
	parent func(client.Object) string
}

// families are the kinds tree shows with their children.
var families = map[string]family{
	"NotionIntegration": {child: "PaperSync", label: papers.IntegrationLabel, parent: func(o client.Object) string {
		if p, ok := o.(*v1alpha1.PaperSync); ok {
			return p.Spec.IntegrationRef.Name
		}
		return ""
	}},
	"SheetConnection": {child: "SheetSync", label: timesheet.ConnectionLabel, parent: func(o client.Object) string {
		if p, ok := o.(*v1alpha1.SheetSync); ok {
			return p.Spec.ConnectionRef.Name
		}
		return ""
	}},
}

func (r *root) treeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "tree " + targetUsage,
		Short: "Show a NotionIntegration with its PaperSyncs, or a SheetConnection with its SheetSyncs",
		Long: `Tree shows a parent object and its children, each with its Ready status,
reason and message: a NotionIntegration with the PaperSyncs whose
spec.integrationRef names it, a SheetConnection with the SheetSyncs whose
spec.connectionRef names it. Children are listed oldest first.`,
		Example: `  kubectl switchboard tree notion/research
  kubectl switchboard tree sheetconn timesheet -n team-a`,
		Args: cobra.RangeArgs(1, 2),
		RunE: r.onObject(func(ctx context.Context, s *session, t target) error {
			return s.tree(ctx, t)
		}),
	}
}

// tree prints t and its children.
func (s *session) tree(ctx context.Context, t target) error {
	fam, ok := families[t.kind.Kind]
	if !ok {
		var parents []string
		for p, f := range families {
			parents = append(parents, p+" (its "+f.child+"s)")
		}
		slices.Sort(parents)
		return fmt.Errorf("a %s has no children: tree shows %s", t.kind.Kind, strings.Join(parents, " and "))
	}
	parent, err := s.get(ctx, t)
	if err != nil {
		return err
	}
	childKind, err := s.kinds.lookup(fam.child)
	if err != nil {
		return err
	}
	children, err := s.children(ctx, t, childKind, fam)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(s.out(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREADY\tREASON\tAGE\tMESSAGE")
	s.treeRow(tw, "", t.kind, parent)
	for i, c := range children {
		branch := "├── "
		if i == len(children)-1 {
			branch = "└── "
		}
		s.treeRow(tw, branch, childKind, c)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(children) == 0 {
		fmt.Fprintf(s.errOut(), "%s has no %ss.\n", t, fam.child)
	}
	return nil
}

func (s *session) treeRow(w io.Writer, branch string, k kind, o client.Object) {
	r := rowOf(k, o)
	fmt.Fprintf(w, "%s%s/%s\t%s\t%s\t%s\t%s\n", branch, k.Kind, r.name, r.ready.Status, dash(r.ready.Reason), s.age(r.created), r.ready.Message)
}

// children lists the children of t, oldest first. The operator labels
// the children it creates with their parent's name, so those are
// selected by the label; children created by hand may carry no label, so
// the unlabelled ones are listed too. The spec reference decides.
func (s *session) children(ctx context.Context, t target, k kind, fam family) ([]client.Object, error) {
	labelled, err := labels.NewRequirement(fam.label, selection.Equals, []string{t.key.Name})
	if err != nil {
		return nil, err
	}
	unlabelled, err := labels.NewRequirement(fam.label, selection.DoesNotExist, nil)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, req := range []*labels.Requirement{labelled, unlabelled} {
		objs, err := s.listAll(ctx, k, client.InNamespace(t.key.Namespace), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)})
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if fam.parent(o) == t.key.Name {
				out = append(out, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b client.Object) int {
		return cmp.Or(a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time), strings.Compare(a.GetName(), b.GetName()))
	})
	return out, nil
}

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
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// suspendCommand is suspend (suspend true) or resume (false).
func (r *root) suspendCommand(suspend bool) *cobra.Command {
	verb, short, long, example := "resume", "Resume a suspended object (spec.suspend: false)",
		`Resume sets spec.suspend to false, and the controller picks the object up
again. It does not wait: run reconcile to wait for the object to be Ready.`,
		`  kubectl switchboard resume notion/research
  kubectl switchboard resume slidestock deck -n team-a && kubectl switchboard reconcile slidestock deck -n team-a`
	if suspend {
		verb, short, long, example = "suspend", "Suspend an object (spec.suspend: true)",
			`Suspend sets spec.suspend to true: the controller leaves the object alone
until it is resumed. What suspending stops depends on the kind: a
NotionIntegration stops refreshing its token and repairing its database, a
CalendarWatch stops syncing and stops its push channel, a SheetConnection
disconnects (its grant is revoked), a SlideStock stops fetching.`,
			`  kubectl switchboard suspend calwatch/visits
  kubectl switchboard suspend slidestock deck -n team-a`
	}
	return &cobra.Command{
		Use:     verb + " " + targetUsage,
		Short:   short,
		Long:    long + "\n\nOnly " + apiKindsThat(isSuspendable, "and") + " can be suspended.",
		Example: example,
		Args:    cobra.RangeArgs(1, 2),
		RunE: r.onObject(func(ctx context.Context, s *session, t target) error {
			return s.setSuspend(ctx, t, suspend)
		}),
	}
}

func isSuspendable(o runtime.Object) bool { _, ok := o.(v1alpha1.Suspendable); return ok }

// setSuspend sets t's spec.suspend with a merge patch.
func (s *session) setSuspend(ctx context.Context, t target, suspend bool) error {
	verb := map[bool]string{true: "suspend", false: "resume"}[suspend]
	if ok := s.kinds.those(s.scheme, isSuspendable); !slices.ContainsFunc(ok, func(k kind) bool { return k.Kind == t.kind.Kind }) {
		return fmt.Errorf("cannot %s a %s: it has no spec.suspend; the kinds that can be suspended are %s", verb, t.kind.Kind, ok.describe())
	}
	obj, err := s.get(ctx, t)
	if err != nil {
		return err
	}
	if err := s.mergePatch(ctx, obj, map[string]any{"spec": map[string]any{"suspend": suspend}}); err != nil {
		return fmt.Errorf("%s %s: %w", verb, t, err)
	}
	done := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	fmt.Fprintf(s.out(), "✔ %s %s in %s\n", t, done, t.key.Namespace)
	return nil
}

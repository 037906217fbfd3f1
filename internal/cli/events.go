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
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func (r *root) eventsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "events " + targetUsage,
		Short: "List the Events of an object, oldest first",
		Long: `Events lists the Events whose involved object is the given object, oldest
first, as kubectl events --for does: the Warnings a controller raised for a
failure, and its Normal events. The object need not exist any more: the
Events of a deleted object are kept until they expire (an hour, by default).`,
		Example: `  kubectl switchboard events notion/research
  kubectl switchboard events rlink prize-alice -n team-a`,
		Args: cobra.RangeArgs(1, 2),
		RunE: r.onObject(func(ctx context.Context, s *session, t target) error {
			return s.events(ctx, t)
		}),
	}
}

// events prints the Events of t. The core Events API serves those written
// through events.k8s.io as well.
func (s *session) events(ctx context.Context, t target) error {
	var list corev1.EventList
	sel := fields.Set{"involvedObject.kind": t.kind.Kind, "involvedObject.name": t.key.Name}.AsSelector()
	if err := s.client.List(ctx, &list, client.InNamespace(t.key.Namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("list the events of %s: %w", t, err)
	}
	if len(list.Items) == 0 {
		fmt.Fprintf(s.errOut(), "No events found for %s in namespace %s.\n", t, t.key.Namespace)
		return nil
	}
	evs := list.Items
	slices.SortStableFunc(evs, func(a, b corev1.Event) int {
		return cmp.Or(lastSeen(&a).Compare(lastSeen(&b)), strings.Compare(a.Name, b.Name))
	})
	tw := tabwriter.NewWriter(s.out(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAST SEEN\tTYPE\tREASON\tOBJECT\tCOUNT\tMESSAGE")
	for i := range evs {
		e := &evs[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", s.age(lastSeen(e)), e.Type, e.Reason, t, count(e), oneLine(e.Message))
	}
	return tw.Flush()
}

// lastSeen is when an event last happened, whichever API wrote it: the
// series' last observation, the core API's lastTimestamp, the
// events.k8s.io eventTime, or when the Event was created.
func lastSeen(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// count is how many times the event happened.
func count(e *corev1.Event) int32 {
	switch {
	case e.Series != nil:
		return e.Series.Count
	case e.Count > 0:
		return e.Count
	}
	return 1
}

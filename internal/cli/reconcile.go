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
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// DefaultReconcileTimeout is how long reconcile waits for the controller
// unless --timeout says otherwise: flux reconcile's default.
const DefaultReconcileTimeout = 5 * time.Minute

func (r *root) reconcileCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "reconcile " + targetUsage,
		Short: "Reconcile an object now and wait until it is Ready, or say why not",
		Long: `Reconcile asks the object's controller to reconcile it now, whatever its
timers say, and waits for the outcome, as flux reconcile does.

It sets the switchboard.dev/requested-at annotation to the current time, then
watches the object until the controller has acted on that value
(status.lastHandledRequestedAt) and:

  - Ready is True for the object's current generation: it prints the Ready
    message and exits 0;
  - Ready is False, or Stalled is True: it prints the reason and message and
    exits 1;
  - --timeout passes first: it says what it last saw and exits 1.`,
		Example: `  # Refresh a NotionIntegration's token and database now
  kubectl switchboard reconcile notion/research

  # Fetch a SlideStock again, waiting at most 30 seconds
  kubectl switchboard reconcile slidestock deck --timeout 30s -n team-a`,
		Args: cobra.RangeArgs(1, 2),
		RunE: r.onObject(func(ctx context.Context, s *session, t target) error {
			return s.reconcile(ctx, t, timeout)
		}),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", DefaultReconcileTimeout, "how long to wait for the controller's outcome")
	return cmd
}

// reconcile requests a reconcile of t and waits for its outcome.
func (s *session) reconcile(ctx context.Context, t target, timeout time.Duration) error {
	obj, err := s.get(ctx, t)
	if err != nil {
		return err
	}
	value := s.opts.Now().UTC().Format(time.RFC3339Nano)
	if err := s.annotate(ctx, obj, v1alpha1.RequestedAtAnnotation, value); err != nil {
		return fmt.Errorf("annotate %s: %w", t, err)
	}
	fmt.Fprintf(s.errOut(), "► requested a reconcile of %s in %s (%s=%s)\n", t, t.key.Namespace, v1alpha1.RequestedAtAnnotation, value)
	fmt.Fprintf(s.errOut(), "◎ waiting up to %s for the controller\n", timeout)
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := obj
	err = s.watchObject(wctx, t, obj, func(o client.Object) (bool, error) {
		last = o
		return reconciled(t, o, value)
	})
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return fmt.Errorf("timed out after %s waiting for the controller to reconcile %s: %s", timeout, t, pending(last, value))
	case err != nil:
		return err
	}
	fmt.Fprintf(s.out(), "✔ %s is Ready: %s\n", t, readyOf(last).Message)
	return nil
}

// reconciled judges o once its controller has acted on the requested-at
// value: done with no error when Ready is True for its generation, done
// with the reason and message when it is not Ready, not done while the
// controller has not acted or is still working.
func reconciled(t target, o client.Object, value string) (bool, error) {
	so, ok := o.(v1alpha1.StatusObject)
	if !ok {
		return false, fmt.Errorf("%s has no Switchboard status", t)
	}
	st := so.GetReconcileStatus()
	if st.LastHandledRequestedAt != value {
		return false, nil
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.StalledCondition); c != nil && c.Status == metav1.ConditionTrue {
		return true, fmt.Errorf("%s is Stalled: %s: %s (the controller waits for a person to fix this)", t, c.Reason, oneLine(c.Message))
	}
	ready := meta.FindStatusCondition(st.Conditions, v1alpha1.ReadyCondition)
	switch {
	case ready == nil:
		return false, nil
	case ready.Status == metav1.ConditionFalse:
		retry := ""
		if meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ReconcilingCondition) {
			retry = " (Reconciling: the controller tries again by itself)"
		}
		return true, fmt.Errorf("%s is not Ready: %s: %s%s", t, ready.Reason, oneLine(ready.Message), retry)
	case ready.Status == metav1.ConditionTrue && st.ObservedGeneration == o.GetGeneration():
		return true, nil
	}
	return false, nil
}

// pending says why o is not reconciled yet, for a timeout.
func pending(o client.Object, value string) string {
	so, ok := o.(v1alpha1.StatusObject)
	if !ok {
		return "it has no Switchboard status"
	}
	st := so.GetReconcileStatus()
	if st.LastHandledRequestedAt != value {
		return fmt.Sprintf("the controller has not acted on %s=%s (status.lastHandledRequestedAt is %q): is the manager running, and does it watch this namespace?",
			v1alpha1.RequestedAtAnnotation, value, st.LastHandledRequestedAt)
	}
	r := readyOf(o)
	if st.ObservedGeneration != o.GetGeneration() {
		return fmt.Sprintf("the controller is still working on generation %d (observedGeneration %d); Ready is %s: %s: %s",
			o.GetGeneration(), st.ObservedGeneration, r.Status, r.Reason, r.Message)
	}
	return fmt.Sprintf("the controller is still working: Ready is %s: %s: %s", r.Status, r.Reason, r.Message)
}

// annotate sets one annotation with a JSON merge patch, and leaves obj as
// the API server answered.
func (s *session) annotate(ctx context.Context, obj client.Object, key, value string) error {
	return s.mergePatch(ctx, obj, map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
}

// mergePatch applies patch to obj as a JSON merge patch.
func (s *session) mergePatch(ctx context.Context, obj client.Object, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return s.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, b))
}

// watchObject calls check with from, then with the object each time the
// API server changes it, until check reports done (returning its error),
// the object is deleted, or ctx ends (returning ctx.Err()). A watch the
// server ends is resumed where it stopped; one whose resource version
// expired starts again from a fresh read.
func (s *session) watchObject(ctx context.Context, t target, from client.Object, check func(client.Object) (bool, error)) error {
	if done, err := check(from); done {
		return err
	}
	rv := from.GetResourceVersion()
	for ctx.Err() == nil {
		list, err := s.newList(t.kind)
		if err != nil {
			return err
		}
		w, err := s.client.Watch(ctx, list, &client.ListOptions{
			Namespace:     t.key.Namespace,
			FieldSelector: fields.OneTermEqualSelector("metadata.name", t.key.Name),
			Raw:           &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true},
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return fmt.Errorf("watch %s: %w", t, err)
		}
		done, err := s.drain(ctx, t, w, &rv, check)
		w.Stop()
		if done {
			return err
		}
	}
	return ctx.Err()
}

// drain reads one watch until check is done, the watch ends, or ctx ends;
// *rv follows the last resource version seen.
func (s *session) drain(ctx context.Context, t target, w watch.Interface, rv *string, check func(client.Object) (bool, error)) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Added, watch.Modified:
				o, ok := ev.Object.(client.Object)
				if !ok {
					continue
				}
				*rv = o.GetResourceVersion()
				if done, err := check(o); done {
					return true, err
				}
			case watch.Deleted:
				return true, fmt.Errorf("%s was deleted", t)
			case watch.Bookmark:
				if m, err := meta.Accessor(ev.Object); err == nil {
					*rv = m.GetResourceVersion()
				}
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
					return true, fmt.Errorf("watch %s: %w", t, err)
				}
				// Too old to resume: read the object again.
				o, err := s.get(ctx, t)
				if err != nil {
					return true, err
				}
				*rv = o.GetResourceVersion()
				if done, err := check(o); done {
					return true, err
				}
				return false, nil
			}
		}
	}
}

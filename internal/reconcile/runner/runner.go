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

// Package runner is the one reconcile skeleton of every Switchboard kind,
// after Flux's source-controller (phases over one object, status patched
// once by a deferred patcher) and cluster-api (reconcileNormal /
// reconcileDelete): get the object, suspend, the requested-at
// acknowledgement, the finalizer, phases in order with typed outcomes, one
// status write, failures logged once, the next deadline jittered.
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/clocks"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Object is every Switchboard kind.
type Object interface {
	client.Object
	v1alpha1.StatusObject
}

// Run is what one reconcile knows besides the object.
type Run struct {
	// Now is the clock's time when the reconcile began.
	Now time.Time
	// Requested is true when a person set a new requested-at annotation
	// (already acknowledged in status): do now what timers would do later.
	Requested bool
	// Patcher writes the object's status once, after the phases. A phase
	// that writes other objects' statuses uses status.NewPatcher for them.
	Patcher *status.Patcher

	deadlines []time.Time
	values    map[any]any
}

// Key is a slot of a Run that one phase fills for the later phases of the
// same reconcile (the OAuth grant phase hands on the access token). What
// a Key holds lives for one reconcile: it is never stored or shown.
type Key[V any] struct{ _ byte }

// NewKey returns a new slot; each call's is distinct.
func NewKey[V any]() *Key[V] { return &Key[V]{} }

// Put fills the slot for the phases after this one.
func (k *Key[V]) Put(run *Run, v V) {
	if run.values == nil {
		run.values = map[any]any{}
	}
	run.values[k] = v
}

// From is what an earlier phase of this reconcile put in the slot, or V's
// zero value.
func (k *Key[V]) From(run *Run) V {
	v, _ := run.values[k].(V)
	return v
}

// RequeueAt asks to be reconciled again at t; after a successful run the
// runner requeues at the earliest deadline asked for, put off by at most
// outbound.MaxDeadlineSpread and never early (outbound.JitterLater).
func (r *Run) RequeueAt(t time.Time) { r.deadlines = append(r.deadlines, t) }

// Next is how long until the earliest deadline asked for, if any.
func (r *Run) Next() (time.Duration, bool) { return outbound.Next(r.Now, r.deadlines...) }

// Phase is one step of a reconcile.
type Phase[T Object] func(ctx context.Context, obj T, run *Run) Outcome

// DefaultDeleteGiveUp bounds how long a deletion waits for its release
// phases (stop a channel, delete a blob) before the finalizer is removed
// anyway, with a Warning Event: a resource whose credentials are gone can
// still be deleted.
const DefaultDeleteGiveUp = 10 * time.Minute

// DefaultTransient is the schedule of Transient outcomes when a Runner
// names none: 1 s doubling to 5 minutes, ±10 %.
var DefaultTransient = outbound.Schedule{Base: time.Second, Max: outbound.MaxRetryAfter, Jitter: outbound.DefaultJitter}

// Runner reconciles one kind. Its Reconcile is the controller's.
type Runner[T Object] struct {
	Client   client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// New returns an empty object of the kind.
	New func() T
	// Normal are the phases of a live object, in order. When every one
	// continues, the runner marks the object Ready (reason Succeeded,
	// observedGeneration caught up): a phase never does.
	Normal []Phase[T]
	// Ready, when set, says what Ready's message is once every Normal
	// phase continued, and may record the kind's own sign of it (a phase
	// field such as Active); without it the message is "reconciled".
	Ready func(T) string
	// Suspend are the phases run while the object is suspended (release
	// what it holds outside the cluster); the runner then marks it
	// Ready=False, reason Suspended.
	Suspend []Phase[T]
	// Delete are the phases that release what the object holds outside the
	// cluster; when there are any, the runner keeps a finalizer on it.
	Delete []Phase[T]
	// DeleteGiveUp bounds the Delete phases (DefaultDeleteGiveUp when 0).
	DeleteGiveUp time.Duration
	// Transient is the schedule of Transient outcomes (DefaultTransient
	// when its Base is 0).
	Transient outbound.Schedule
	// Exhausted, when set, is the wait after a Transient outcome once the
	// Transient schedule's retries are spent: the kind's normal timer
	// (CalendarWatch: 1, 2, 4, 8, 16 s, then the backup sync interval,
	// seed 002 "Sync Errors"). Without it the schedule goes on doubling.
	Exhausted func(T) time.Duration
	// ShutdownGrace is how long a reconcile in flight goes on once the
	// manager stops (DefaultShutdownGrace when 0): phases see Stopping,
	// and their context is cancelled only after it.
	ShutdownGrace time.Duration

	failures sync.Map // types.NamespacedName → int: consecutive Transient outcomes
}

// Reconcile is the dispatcher: get, patch status once, delete or suspend
// or the phases.
func (r *Runner[T]) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	ctx, finished := outliving(ctx, cmp.Or(r.ShutdownGrace, DefaultShutdownGrace))
	defer finished()
	obj := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		r.failures.Delete(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	run := &Run{Now: r.now(), Patcher: status.NewPatcher(r.Client, obj)}
	defer func() {
		if err := run.Patcher.Patch(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			retErr = errors.Join(retErr, err)
		}
	}()
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, obj, run)
	}
	// The finalizer first: its patch answers with the stored object,
	// which must not overwrite status changes made in memory.
	if len(r.Delete) > 0 && !controllerutil.ContainsFinalizer(obj, v1alpha1.Finalizer) {
		if err := r.patchFinalizer(ctx, obj, controllerutil.AddFinalizer); err != nil {
			return ctrl.Result{}, err
		}
	}
	if v, ok := status.RequestedAt(obj); ok {
		status.AcknowledgeRequest(obj, v)
		run.Requested = true
	}
	if s, ok := any(obj).(v1alpha1.Suspendable); ok && s.IsSuspended() {
		return r.reconcileSuspended(ctx, obj, run), nil
	}
	out, completed := r.phases(ctx, obj, run, r.Normal)
	if !completed {
		return keepDeadlines(r.finish(ctx, obj, out), run), nil
	}
	r.failures.Delete(req.NamespacedName)
	status.MarkReady(obj, v1alpha1.SucceededReason, r.readyMessage(obj))
	if d, ok := run.Next(); ok {
		if d <= 0 {
			// A deadline already past: look again soon, not in a loop.
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{RequeueAfter: outbound.JitterLater(d, outbound.DefaultJitter)}, nil
	}
	return ctrl.Result{}, nil
}

// phases runs phases in order until one does not Continue.
func (r *Runner[T]) phases(ctx context.Context, obj T, run *Run, phases []Phase[T]) (Outcome, bool) {
	for _, p := range phases {
		if out := p(ctx, obj, run); out.kind != kindContinue {
			return out, false
		}
	}
	return Continue(), true
}

// keepDeadlines brings res forward to the earliest deadline the phases
// that ran asked for (a token refresh, a channel attempt status promises):
// a phase that failed after them does not put them off.
// Deadlines already due are not kept: the phase acts on them now, and its
// failure has its own schedule.
func keepDeadlines(res ctrl.Result, run *Run) ctrl.Result {
	var future []time.Time
	for _, t := range run.deadlines {
		if t.After(run.Now) {
			future = append(future, t)
		}
	}
	first, ok := outbound.Next(run.Now, future...)
	if !ok {
		return res
	}
	d := outbound.JitterLater(first, outbound.DefaultJitter)
	if res.RequeueAfter == 0 || d < res.RequeueAfter {
		res.RequeueAfter = d
	}
	return res
}

// finish turns an outcome that ended the phases into status, a log line
// (once per new failure) and a requeue.
func (r *Runner[T]) finish(ctx context.Context, obj T, out Outcome) ctrl.Result {
	key := client.ObjectKeyFromObject(obj)
	msg := ""
	if out.err != nil {
		msg = out.err.Error()
	}
	if out.kind == kindTransient && apierrors.IsConflict(out.err) {
		// A conflict is the API server asking for a fresh read: another
		// writer (a sweep, a link sharing the same Secret) changed the
		// object this phase wrote since it was read. It says nothing of
		// the object, so status keeps what it said (a serving link
		// marked Ready=False would answer 503 for a moment), the attempt
		// is not counted, and the object comes back after the schedule's
		// first wait, from a fresh read.
		log.FromContext(ctx).V(1).Info("a write met a newer version; reading again", "error", out.err.Error())
		return ctrl.Result{RequeueAfter: r.schedule().Delay(1)}
	}
	if out.Failed() {
		r.logOnce(ctx, obj, out, msg)
	}
	if out.kind != kindTransient {
		r.failures.Delete(key)
	}
	switch out.kind {
	case kindWait:
		return ctrl.Result{RequeueAfter: max(outbound.Jitter(out.after, outbound.DefaultJitter), time.Millisecond)}
	case kindDone:
		return ctrl.Result{}
	case kindRetry:
		// Put off by a little, never earlier: d is at least the
		// upstream's Retry-After, and objects failing together do not
		// come back together.
		status.MarkRetrying(obj, out.reason, msg)
		return ctrl.Result{RequeueAfter: max(outbound.JitterLater(out.after, outbound.DefaultJitter), time.Millisecond)}
	case kindTransient:
		status.MarkRetrying(obj, out.reason, msg)
		n := 1
		if v, ok := r.failures.Load(key); ok {
			n = v.(int) + 1
		}
		r.failures.Store(key, n)
		if r.Exhausted != nil {
			return ctrl.Result{RequeueAfter: r.schedule().AfterOr(n, out.err, r.Exhausted(obj))}
		}
		return ctrl.Result{RequeueAfter: r.schedule().After(n, out.err)}
	case kindStall:
		recheck := stallRecheck(obj, out, r.now())
		status.MarkStalled(obj, out.reason, msg)
		return ctrl.Result{RequeueAfter: outbound.Jitter(recheck, outbound.DefaultJitter)}
	}
	return ctrl.Result{}
}

// MaxStallRecheck bounds how far apart a stalled object's rechecks grow
// (Flux's --max-retry-delay default).
const MaxStallRecheck = 15 * time.Minute

// stallRecheck is how long a Stall waits to look again: its RecheckAfter
// at first, then as long as the object has been stalled for the same
// reason, up to MaxStallRecheck, so the checks thin out (2, 4, 8, 15
// minutes…) for what a person has left for a day. Each recheck reads
// Secrets from the API server: 30,000 parents waiting to be connected
// would otherwise read 500 Secrets a second forever. What the manager
// watches (a grant the callback writes, a spec change, a requested-at
// annotation) still brings the object back at once.
func stallRecheck(obj status.Object, out Outcome, now time.Time) time.Duration {
	d := out.recheck
	if d <= 0 {
		return 0
	}
	if c := status.Get(obj, v1alpha1.StalledCondition); c != nil && c.Status == metav1.ConditionTrue && c.Reason == out.reason {
		d = max(d, now.Sub(c.LastTransitionTime.Time))
	}
	return min(d, max(out.recheck, MaxStallRecheck))
}

// logOnce logs a failure when its reason or message is new: the object's
// Ready condition still holds the last one, so a failure repeated by every
// retry is one line, not one per attempt. The logger carries the object's
// key; messages never hold tokens (they are errors of our own wording or
// upstream error bodies, which carry none).
func (r *Runner[T]) logOnce(ctx context.Context, obj T, out Outcome, msg string) {
	if c := status.Get(obj, v1alpha1.ReadyCondition); c != nil && c.Reason == out.reason && c.Message == msg {
		return
	}
	log.FromContext(ctx).Error(out.err, "reconcile failed", "reason", out.reason)
}

func (r *Runner[T]) reconcileSuspended(ctx context.Context, obj T, run *Run) ctrl.Result {
	if out, completed := r.phases(ctx, obj, run, r.Suspend); !completed {
		return r.finish(ctx, obj, out)
	}
	status.Set(obj, v1alpha1.ReadyCondition, metav1.ConditionFalse, v1alpha1.SuspendedReason, "spec.suspend is true: the controller does nothing")
	status.Remove(obj, v1alpha1.ReconcilingCondition)
	status.Remove(obj, v1alpha1.StalledCondition)
	obj.GetReconcileStatus().ObservedGeneration = obj.GetGeneration()
	return ctrl.Result{}
}

// reconcileDelete runs the release phases; the finalizer goes when they
// complete, or when DeleteGiveUp has passed since the deletion began.
func (r *Runner[T]) reconcileDelete(ctx context.Context, obj T, run *Run) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, v1alpha1.Finalizer) {
		return ctrl.Result{}, nil
	}
	out, completed := r.phases(ctx, obj, run, r.Delete)
	if !completed {
		giveUpAt := obj.GetDeletionTimestamp().Add(r.deleteGiveUp())
		if run.Now.Before(giveUpAt) {
			res := r.finish(ctx, obj, out)
			if res.RequeueAfter == 0 || run.Now.Add(res.RequeueAfter).After(giveUpAt) {
				res.RequeueAfter = giveUpAt.Sub(run.Now)
			}
			return res, nil
		}
		msg := fmt.Sprintf("gave up releasing it after %s; the finalizer is removed so that the deletion completes; last error: %v", r.deleteGiveUp(), out.err)
		log.FromContext(ctx).Error(out.err, "deletion gave up", "reason", out.reason)
		if r.Recorder != nil {
			r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "DeleteGaveUp", "Delete", "%s", msg)
		}
	}
	r.failures.Delete(types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()})
	return ctrl.Result{}, r.patchFinalizer(ctx, obj, controllerutil.RemoveFinalizer)
}

// patchFinalizer adds or removes the finalizer with a merge patch of the
// metadata alone (the status is patched separately, once).
func (r *Runner[T]) patchFinalizer(ctx context.Context, obj T, change func(client.Object, string) bool) error {
	before := obj.DeepCopyObject().(client.Object)
	if !change(obj, v1alpha1.Finalizer) {
		return nil
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("patch finalizer of %s: %w", client.ObjectKeyFromObject(obj), err))
	}
	return nil
}

func (r *Runner[T]) now() time.Time {
	return clocks.Now(r.Clock)
}

func (r *Runner[T]) readyMessage(obj T) string {
	if r.Ready == nil {
		return "reconciled"
	}
	return r.Ready(obj)
}

func (r *Runner[T]) deleteGiveUp() time.Duration {
	if r.DeleteGiveUp > 0 {
		return r.DeleteGiveUp
	}
	return DefaultDeleteGiveUp
}

func (r *Runner[T]) schedule() outbound.Schedule {
	if r.Transient.Base > 0 {
		return r.Transient
	}
	return DefaultTransient
}

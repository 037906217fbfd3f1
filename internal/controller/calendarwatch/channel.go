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

package calendarwatch

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/gcalendar"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Keys of the channel Secret (<name>-calendar), which the watch owns.
const (
	// ChannelTokenKey is the token Google echoes in X-Goog-Channel-Token.
	ChannelTokenKey = "channelToken"
	// SyncTokenKey is the last page's nextSyncToken.
	SyncTokenKey = "syncToken"
	// PageTokenKey is the cursor of a sync interrupted between pages, with
	// the sync token it belongs to in SyncTokenKey.
	PageTokenKey = "pageToken"
)

// ChannelSecretName is the name of a watch's channel Secret.
func ChannelSecretName(watch string) string { return watch + "-calendar" }

// channelTokenBytes: 256 bits, 43 characters in base64url (Google allows
// 256).
const channelTokenBytes = 32

// channelSecret keeps the Secret holding the channel token, the sync
// cursor and the record of open channels, and the token's hash in status
// for the webhook. A Secret a restore brought back is claimed
// (ownChannelSecret), and the channels it records rebuild what status
// lost (restoreChannels).
func (r *Reconciler) channelSecret(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	sec, claimed, err := r.ownChannelSecret(ctx, obj)
	switch {
	case apierrors.IsNotFound(err):
		key := types.NamespacedName{Namespace: obj.Namespace, Name: ChannelSecretName(obj.Name)}
		data := map[string][]byte{ChannelTokenKey: []byte(capability.Random(channelTokenBytes))}
		created, err := oauth.CreateOwnedSecret(ctx, r.Client, obj, key, nil, data)
		switch {
		case err != nil:
			return runner.Transient(v1alpha1.SecretReadFailedReason, err)
		case !created:
			// The cache has not seen it yet: the next reconcile judges the
			// Secret there is.
			return runner.Wait(time.Second)
		}
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name}, Data: data}
	case errors.Is(err, oauth.ErrConnectSecretConflict):
		return runner.Stall(v1alpha1.ConnectSecretConflictReason, err)
	case err != nil:
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	obj.Status.ChannelTokenSecretName = sec.Name
	obj.Status.ChannelTokenHash = calendarpush.HashToken(string(sec.Data[ChannelTokenKey]))
	if claimed {
		// No channel may carry the new token before the cache holds it
		// (the channel phase reads it there): the claim's own event
		// reconciles the watch again.
		return runner.Wait(time.Second)
	}
	return r.restoreChannels(ctx, obj, run, sec)
}

func (r *Reconciler) readChannelSecret(ctx context.Context, obj *v1alpha1.CalendarWatch) (*corev1.Secret, error) {
	var sec corev1.Secret
	if err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: ChannelSecretName(obj.Name)}, &sec); err != nil {
		return nil, err
	}
	if len(sec.Data[ChannelTokenKey]) == 0 {
		return nil, fmt.Errorf("secret %s has no key %s", sec.Name, ChannelTokenKey)
	}
	return &sec, nil
}

// RenewAt is when a channel is due for renewal: renewBefore ahead of its
// expiration, up to a tenth of that earlier, spread by the channel id so
// that channels opened together are not due together (and the same
// instant on every reconcile). Google may grant less than asked: a channel
// whose whole life is shorter than renewBefore is due halfway through it,
// never at once and again at once; one whose life is only a little longer
// than renewBefore is spread no earlier than the instant it was opened.
// The life is known from the channel's sequence, the Unix milliseconds it
// was opened at.
func RenewAt(ch *v1alpha1.ChannelStatus, renewBefore time.Duration) time.Time {
	due, _, _ := renewal(ch, renewBefore)
	return due
}

// renewStart is when the renewal of a channel begins: renewLead ahead of
// its due instant (RenewAt), so that a burst of renewals queued behind one
// another still has each successor open by its due instant rather than
// after it; never before the channel was opened (a renewal begun then
// would begin again as soon as its successor opened).
func renewStart(ch *v1alpha1.ChannelStatus, renewBefore time.Duration) time.Time {
	due, before, opened := renewal(ch, renewBefore)
	if due.IsZero() {
		return due
	}
	start := due.Add(-renewLead(before))
	if start.Before(opened) && !due.Before(opened) {
		return opened
	}
	return start
}

// renewLead is how far ahead of its due instant a renewal begins: a
// twentieth of the renewBefore in force, at most five minutes (30 s for
// 10m, five minutes for the default 24h). Renewals begin at most 10 % +
// 5 % of renewBefore early, inside the slack a person gave. The bench's
// 10,000 channels due within one minute took a manager on two cores about
// 75 s to renew: begun at their due instants, the last were 15 s late.
func renewLead(renewBefore time.Duration) time.Duration {
	return min(renewBefore/20, 5*time.Minute)
}

// renewal is RenewAt, the renewBefore in force (halved for a short life)
// and when the channel was opened.
func renewal(ch *v1alpha1.ChannelStatus, renewBefore time.Duration) (due time.Time, before time.Duration, opened time.Time) {
	if ch == nil || ch.Expiration == nil {
		return time.Time{}, 0, time.Time{}
	}
	opened = time.UnixMilli(calendarpush.ChannelSequence(ch))
	life := ch.Expiration.Sub(opened)
	if life > 0 && life <= renewBefore {
		renewBefore = life / 2
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(ch.ID))
	spread := time.Duration(h.Sum64() % uint64(renewBefore/10+1)) //nolint:gosec // renewBefore is positive (CEL) and the result is below it
	if life > 0 {
		// A life a little longer than renewBefore leaves less than the
		// spread before it: due no earlier than the channel opened.
		spread = min(spread, life-renewBefore)
	}
	return ch.Expiration.Add(-renewBefore - spread), renewBefore, opened
}

// channel opens the push channel, renews it before it expires (the new one
// first, then the old one stopped: no gap), and retries a refused one on a
// backoff. It never ends the reconcile: without a channel the backup sync
// still deletes appointments (seed 002 "Graceful Degradation").
func (r *Reconciler) channel(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	r.stopPrevious(ctx, obj, run, true)
	if r.PublicURL == "" {
		status.Set(obj, v1alpha1.ChannelReadyCondition, metav1.ConditionFalse, v1alpha1.NoPublicURLReason,
			"the manager has no --public-url, so Google cannot be told where to push; the backup sync runs every "+obj.Spec.BackupSyncInterval.Duration.String())
		return runner.Continue()
	}
	cur := obj.Status.Channel
	if !r.channelSeen(obj, run) {
		return runner.Continue()
	}
	if !channelDue(obj, run) {
		return r.keepRecord(ctx, obj, run)
	}
	sec, err := r.readChannelSecret(ctx, obj)
	if err != nil {
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	// Status must name the token's hash before Google may push on the new
	// channel; it does after the first reconcile, this write covers it.
	if err := run.WriteAhead(ctx, obj); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	return r.openChannel(ctx, obj, run, cur, sec)
}

// cacheLagWait is how soon a watch read before its latest channel was
// cached is looked at again (the status event usually comes first).
const cacheLagWait = time.Second

// channelSeen reports whether obj's status shows the channel this manager
// last opened for it. A reconcile that runs before the informer cache has
// the status write naming that channel (the channel Secret's own event
// queues one at once) reads a copy with no channel, or with the one just
// renewed: opening on that copy would open a second channel, leave the
// first one open at Google, and refuse its pushes as stopped. Such a
// reconcile opens nothing and looks again shortly.
func (r *Reconciler) channelSeen(obj *v1alpha1.CalendarWatch, run *runner.Run) bool {
	if _, ahead := r.opened.Ahead(obj.UID, func(seq int64) bool { return calendarpush.ChannelSequence(obj.Status.Channel) >= seq }); !ahead {
		return true
	}
	run.RequeueAt(run.Now.Add(cacheLagWait))
	return false
}

// channelDue reports whether a channel is to be opened now: none is open,
// the open one is due for renewal, or a person asked, and no backoff after
// a failed attempt holds it off. When it is not, it schedules the
// reconcile for when it will be.
func channelDue(obj *v1alpha1.CalendarWatch, run *runner.Run) bool {
	st := &obj.Status
	cur := st.Channel
	due := renewStart(cur, obj.Spec.Channel.RenewBefore.Duration)
	if cur != nil && run.Now.Before(due) && !run.Requested {
		status.Set(obj, v1alpha1.ChannelReadyCondition, metav1.ConditionTrue, v1alpha1.SucceededReason,
			"channel "+cur.ID+" open until "+cur.Expiration.UTC().Format(time.RFC3339))
		run.RequeueAt(due)
		return false
	}
	if cur != nil && cur.Expiration != nil && !run.Now.Before(cur.Expiration.Time) {
		status.Set(obj, v1alpha1.ChannelReadyCondition, metav1.ConditionFalse, v1alpha1.ChannelExpiredReason, "channel "+cur.ID+" expired; opening a new one")
	}
	if at := st.NextChannelAttemptAt; at != nil && run.Now.Before(at.Time) && !run.Requested {
		run.RequeueAt(at.Time)
		return false
	}
	return true
}

// openChannel asks Google for a new channel, carrying the channel token of
// sec; cur is the channel it renews (nil when none is open).
func (r *Reconciler) openChannel(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, cur *v1alpha1.ChannelStatus, sec *corev1.Secret) runner.Outcome {
	seq := max(run.Now.UnixMilli(), calendarpush.ChannelSequence(cur)+1, calendarpush.ChannelSequence(obj.Status.PreviousChannel)+1)
	ch, err := r.Calendar.Watch(ctx, grant.Of(run).Token, gcalendar.WatchRequest{
		CalendarID: obj.Spec.CalendarID, ID: calendarpush.ChannelID(obj.UID, seq), Token: string(sec.Data[ChannelTokenKey]),
		Address: PushAddress(r.PublicURL), Expiration: run.Now.Add(obj.Spec.Channel.TTL.Duration),
	})
	if err != nil {
		return r.channelFailed(obj, run, err)
	}
	return r.channelOpened(ctx, obj, run, cur, ch, sec)
}

// channelFailed handles a channel Google did not open: a refused grant
// asks for re-authentication; anything else schedules the next attempt,
// says so in ChannelReady (and in a Warning Event when the reason
// changes), and lets the reconcile go on. A refusal that may pass (an
// address Google will not call yet, 429, 5xx) is tried again on the
// ChannelRetries backoff; a refusal of the calendar itself (404 notFound
// or 403: the account may not read it) waits as the stalled sync does, a
// backup interval, since only a person sharing the calendar changes it
// (and their requested-at tries at once).
func (r *Reconciler) channelFailed(obj *v1alpha1.CalendarWatch, run *runner.Run, err error) runner.Outcome {
	if errors.Is(err, gcalendar.ErrUnauthorized) {
		return r.grant.Reauth(obj, "OpenChannel", err)
	}
	st := &obj.Status
	st.ChannelFailures++
	wait := ChannelRetries.After(int(st.ChannelFailures), err)
	if gcalendar.CalendarRefused(err) {
		wait = max(wait, obj.Spec.BackupSyncInterval.Duration)
	}
	next := metav1.NewTime(run.Now.Add(wait))
	st.NextChannelAttemptAt = &next
	reason := v1alpha1.UpstreamUnavailableReason
	if outbound.IsPermanent(err) {
		reason = v1alpha1.ChannelRefusedReason
	}
	cond, msg := metav1.ConditionFalse, fmt.Sprintf("%v; next attempt at %s, the backup sync goes on meanwhile", err, next.UTC().Format(time.RFC3339))
	if cur := st.Channel; cur != nil && cur.Expiration != nil && run.Now.Before(cur.Expiration.Time) {
		// A renewal refused: the open channel still carries pushes until
		// it expires, and a person should learn of it before then.
		reason, cond = v1alpha1.RenewalRefusedReason, metav1.ConditionTrue
		msg = fmt.Sprintf("channel %s open until %s, but its renewal failed: %s", cur.ID, cur.Expiration.UTC().Format(time.RFC3339), msg)
	}
	if c := status.Get(obj, v1alpha1.ChannelReadyCondition); c == nil || c.Reason != reason {
		r.event(obj, nil, corev1.EventTypeWarning, reason, "OpenChannel", fmt.Sprintf("could not open a push channel (the backup sync goes on; next attempt %s): %v", next.UTC().Format(time.RFC3339), err))
	}
	status.Set(obj, v1alpha1.ChannelReadyCondition, cond, reason, msg)
	run.RequeueAt(next.Time)
	return runner.Continue()
}

// channelOpened makes the channel Google opened the current one, stops the
// one it renews (cur), and schedules the next renewal. The stop comes
// before the status write: the webhook accepts a channel whose sequence is
// above the one status names (it is being opened), and the old one is
// accepted while status still names it, so there is no gap; and a renewal
// costs one status write and one Event. A stop that fails keeps the old
// channel in status.previousChannel (still accepted), tried again on the
// next reconcile.
func (r *Reconciler) channelOpened(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, cur *v1alpha1.ChannelStatus, ch gcalendar.Channel, sec *corev1.Secret) runner.Outcome {
	st := &obj.Status
	if ch.Expiration.IsZero() {
		ch.Expiration = run.Now.Add(obj.Spec.Channel.TTL.Duration)
	}
	exp := metav1.NewTime(ch.Expiration)
	stopped := ""
	if cur != nil {
		st.PreviousChannel = cur
		if r.stopPrevious(ctx, obj, run, false) {
			stopped = "; stopped " + cur.ID
		}
	}
	st.Channel = &v1alpha1.ChannelStatus{ID: ch.ID, ResourceID: ch.ResourceID, Expiration: &exp}
	st.ChannelFailures, st.NextChannelAttemptAt = 0, nil
	reason, verb := "ChannelOpened", "opened"
	if cur != nil {
		reason, verb = "ChannelRenewed", "renewed: opened"
	}
	r.event(obj, nil, corev1.EventTypeNormal, reason, "OpenChannel",
		fmt.Sprintf("push channel %s %s, expires %s%s", verb, ch.ID, exp.UTC().Format(time.RFC3339), stopped))
	status.Set(obj, v1alpha1.ChannelReadyCondition, metav1.ConditionTrue, v1alpha1.SucceededReason,
		"channel "+ch.ID+" open until "+exp.UTC().Format(time.RFC3339))
	// The record first: a restore brings back the Secret, not status.
	recordErr := r.recordChannels(ctx, obj, sec, leftOpen(obj, sec, run.Now))
	if err := run.WriteAhead(ctx, obj); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	r.opened.Remember(obj.UID, calendarpush.ChannelSequence(st.Channel))
	if recordErr != nil {
		// Written on the next reconcile (keepRecord).
		return runner.Transient(v1alpha1.SecretReadFailedReason, recordErr)
	}
	run.RequeueAt(renewStart(st.Channel, obj.Spec.Channel.RenewBefore.Duration))
	return runner.Continue()
}

// stopPrevious stops the channel a renewal replaced and reports whether it
// is gone from status; a failure leaves it there (still accepted) and is
// tried again on the next reconcile. One past its expiration is simply
// forgotten. With announce, a stop is recorded in its own Event (a retry's;
// a renewal's own stop is told in its ChannelRenewed Event).
func (r *Reconciler) stopPrevious(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run, announce bool) bool {
	prev := obj.Status.PreviousChannel
	if prev == nil {
		return false
	}
	if prev.Expiration == nil || run.Now.Before(prev.Expiration.Time) {
		if err := r.Calendar.Stop(ctx, grant.Of(run).Token, prev.ID, prev.ResourceID); err != nil {
			run.RequeueAt(run.Now.Add(Retries.Exact().After(1, err)))
			return false
		}
		if announce {
			r.event(obj, nil, corev1.EventTypeNormal, "ChannelStopped", "StopChannel", "stopped the replaced push channel "+prev.ID)
		}
	}
	obj.Status.PreviousChannel = nil
	return true
}

// PushAddress is the address a channel is opened with: the webhook
// server's public URL and the push route.
func PushAddress(publicURL string) string {
	return strings.TrimSuffix(publicURL, "/") + calendarpush.PushPath
}

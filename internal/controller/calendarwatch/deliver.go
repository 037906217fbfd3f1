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
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// Headers of an HTTP sink delivery.
const (
	SignatureHeader      = "X-Switchboard-Signature"
	TimestampHeader      = "X-Switchboard-Timestamp"
	IdempotencyKeyHeader = "Idempotency-Key"
)

// SigningKey is the key of the HTTP sink's signing Secret.
const SigningKey = "key"

// Delivery is the JSON body posted to an HTTP sink.
type Delivery struct {
	CalendarID  string    `json:"calendarID"`
	EventID     string    `json:"eventID"`
	Appointment string    `json:"appointment,omitempty"`
	DeletedAt   time.Time `json:"deletedAt"`
}

// Sign is the signature header's value: "sha256=" and the hex HMAC-SHA256
// of "<timestamp>.<body>" under key. A receiver recomputes it, compares
// in constant time, and refuses timestamps older than a few minutes.
func Sign(key []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// deliver posts the pending cancelled events to the HTTP sink, oldest
// first, and stops at the first failure, to try again on a backoff. It
// never ends the reconcile: object deletion does not wait for a sink.
func (r *Reconciler) deliver(ctx context.Context, obj *v1alpha1.CalendarWatch, run *runner.Run) runner.Outcome {
	st := &obj.Status
	if obj.Spec.Sink.HTTP == nil {
		st.PendingDeliveries, st.DeliveryFailures, st.NextDeliveryAt = nil, 0, nil
		return runner.Continue()
	}
	// A URL whose host is an IP the manager refuses stalls the watch at
	// once; a host name is judged when a delivery dials it (below).
	if err := r.Out.CheckSinkURL(obj.Spec.Sink.HTTP.URL); err != nil {
		return sinkRefused(obj, err)
	}
	if len(st.PendingDeliveries) == 0 {
		return runner.Continue()
	}
	if at := st.NextDeliveryAt; at != nil && run.Now.Before(at.Time) && !run.Requested {
		run.RequeueAt(at.Time)
		return runner.Continue()
	}
	key, err := r.signingKey(ctx, obj)
	if err != nil {
		if oauth.IsMissingSecret(err) {
			status.Set(obj, v1alpha1.DeliveredCondition, metav1.ConditionFalse, v1alpha1.SecretNotFoundReason, err.Error())
			run.RequeueAt(run.Now.Add(grant.SecretRecheck))
			return runner.Continue()
		}
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	for len(st.PendingDeliveries) > 0 {
		d := st.PendingDeliveries[0]
		if err := r.post(ctx, obj, key, d, run.Now); err != nil {
			if errors.Is(err, outbound.ErrSinkAddressRefused) {
				return sinkRefused(obj, err)
			}
			st.DeliveryFailures++
			next := metav1.NewTime(run.Now.Add(Retries.Exact().AfterOr(int(st.DeliveryFailures), err, obj.Spec.BackupSyncInterval.Duration)))
			st.NextDeliveryAt = &next
			status.Set(obj, v1alpha1.DeliveredCondition, metav1.ConditionFalse, v1alpha1.UpstreamUnavailableReason,
				fmt.Sprintf("the HTTP sink refused event %s: %v; %d pending, next attempt at %s", d.EventID, err, len(st.PendingDeliveries), next.UTC().Format(time.RFC3339)))
			run.RequeueAt(next.Time)
			return runner.Continue()
		}
		st.PendingDeliveries = st.PendingDeliveries[1:]
		st.DeliveryFailures, st.NextDeliveryAt = 0, nil
	}
	st.PendingDeliveries = nil
	status.Set(obj, v1alpha1.DeliveredCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "the HTTP sink accepted every cancelled event")
	return runner.Continue()
}

// sinkRefused stalls a watch whose HTTP sink is at an address the
// manager never posts to (outbound.SinkPolicy: loopback, link-local such
// as the cloud metadata service, unspecified, and private ranges under
// --sink-deny-private-networks): no connection was opened, and only a
// person changing spec.sink.http.url can help. The sync and the objects
// sink have run; the deliveries wait in status, and the watch is looked
// at again every backupSyncInterval (or on a push, a spec change or a
// requested-at), never in a loop. The message names the address, never
// the URL, whose query may hold a secret.
func sinkRefused(obj *v1alpha1.CalendarWatch, err error) runner.Outcome {
	why := "its address is refused"
	var se *outbound.SinkAddressError
	if errors.As(err, &se) {
		why = se.Error()
	}
	err = &sinkRefusedError{err: err, msg: fmt.Sprintf("the HTTP sink is refused: %s; change spec.sink.http.url (deliveries waiting: %d)",
		why, len(obj.Status.PendingDeliveries))}
	status.Set(obj, v1alpha1.DeliveredCondition, metav1.ConditionFalse, v1alpha1.SinkAddressRefusedReason, err.Error())
	return runner.Stall(v1alpha1.SinkAddressRefusedReason, err).RecheckAfter(obj.Spec.BackupSyncInterval.Duration)
}

// sinkRefusedError is the refusal as a person reads it, wrapping the
// outbound error (outbound.ErrSinkAddressRefused) for the log.
type sinkRefusedError struct {
	msg string
	err error
}

func (e *sinkRefusedError) Error() string { return e.msg }

func (e *sinkRefusedError) Unwrap() error { return e.err }

func (r *Reconciler) signingKey(ctx context.Context, obj *v1alpha1.CalendarWatch) ([]byte, error) {
	ref := obj.Spec.Sink.HTTP.SigningSecretRef
	var sec corev1.Secret
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: ref.Name}, &sec); err != nil {
		return nil, err
	}
	key := sec.Data[SigningKey]
	if len(key) < 16 {
		return nil, fmt.Errorf("%w: Secret %s needs a key %q of at least 16 bytes", oauth.ErrClientIncomplete, ref.Name, SigningKey)
	}
	return key, nil
}

func (r *Reconciler) post(ctx context.Context, obj *v1alpha1.CalendarWatch, key []byte, d v1alpha1.SinkDelivery, now time.Time) error {
	body, err := json.Marshal(Delivery{CalendarID: obj.Spec.CalendarID, EventID: d.EventID, Appointment: d.Appointment, DeletedAt: d.DeletedAt.UTC()})
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(TimestampHeader, ts)
	h.Set(SignatureHeader, Sign(key, ts, body))
	// The same key for every retry of one event: a receiver that saw it
	// already answers 2xx and does nothing.
	h.Set(IdempotencyKeyHeader, string(obj.UID)+":"+d.EventID)
	_, err = r.Out.Do(ctx, outbound.Request{Method: http.MethodPost, SinkURL: obj.Spec.Sink.HTTP.URL, Header: h, Body: bytes.NewReader(body)})
	return err
}

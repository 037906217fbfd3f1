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
	"fmt"
	"net/http"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/runner"
	"github.com/switchboard-dev/switchboard/internal/status"
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
			run.RequeueAt(run.Now.Add(oauth.SecretRecheck))
			return runner.Continue()
		}
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	for len(st.PendingDeliveries) > 0 {
		d := st.PendingDeliveries[0]
		if err := r.post(ctx, obj, key, d, run.Now); err != nil {
			st.DeliveryFailures++
			next := metav1.NewTime(run.Now.Add(outbound.CalendarRetries.AfterOr(int(st.DeliveryFailures), err, obj.Spec.BackupSyncInterval.Duration)))
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

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

package webhook

import (
	"net/http"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// DefaultRetryAfter is the Retry-After of a 503 that has no better
// estimate: long enough for a controller to finish a reconcile or a
// replica to come back, short enough that a sender's retry is not wasted.
// Every 503 the webhook sends carries a Retry-After (issue 7 §1.6).
const DefaultRetryAfter = 30 * time.Second

// Unavailable is a 503 SERVICE_UNAVAILABLE that tells the sender when to
// retry.
func Unavailable(retryAfter time.Duration, format string, args ...any) *Error {
	e := Errorf(http.StatusServiceUnavailable, format, args...)
	e.RetryAfter = retryAfterSeconds(retryAfter)
	return e
}

// NotServing answers 503 with Retry-After for a target that is suspended
// or not Ready, and nil for one that serves. Flux's notification-controller
// refuses a Receiver's webhook the same way (internal/server/
// receiver_handlers.go: "receiver is suspended" / "not ready" → 503): the
// event is not accepted to wait behind a resource that cannot act on it,
// and the sender learns to come back. The caller has already proven the
// capability (the secret path), so naming the reason leaks nothing.
func NotServing(kind string, obj v1alpha1.StatusObject, suspended bool) *Error {
	switch {
	case suspended:
		return Unavailable(DefaultRetryAfter, "the %s is suspended; retry after it is resumed", kind)
	case !meta.IsStatusConditionTrue(obj.GetReconcileStatus().Conditions, v1alpha1.ReadyCondition):
		return Unavailable(DefaultRetryAfter, "the %s is not Ready; retry later", kind)
	}
	return nil
}

// retryAfterHeader is a Retry-After value in whole seconds.
func retryAfterHeader(d time.Duration) string { return strconv.Itoa(retryAfterSeconds(d)) }

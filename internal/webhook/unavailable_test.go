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
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/pages"
)

func TestNotServingAnswers503WithRetryAfter(t *testing.T) {
	ready := &v1alpha1.NotionIntegration{}
	ready.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionTrue}}
	notReady := &v1alpha1.NotionIntegration{}
	notReady.Status.Conditions = []metav1.Condition{{Type: v1alpha1.ReadyCondition, Status: metav1.ConditionFalse}}
	for _, tc := range []struct {
		name      string
		obj       *v1alpha1.NotionIntegration
		suspended bool
		want      string // "" when it serves
	}{
		{"a Ready target serves", ready, false, ""},
		{"a suspended target is refused even when Ready", ready, true, "suspended"},
		{"a target that is not Ready is refused", notReady, false, "not Ready"},
		{"a target never reconciled is refused", &v1alpha1.NotionIntegration{}, false, "not Ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NotServing("integration", tc.obj, tc.suspended)
			if tc.want == "" {
				if e != nil {
					t.Fatalf("refused: %v", e)
				}
				return
			}
			if e == nil || e.Status != http.StatusServiceUnavailable || e.Code != CodeServiceUnavailable ||
				e.RetryAfter != int(DefaultRetryAfter.Seconds()) || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("got %+v", e)
			}
		})
	}
}

func TestEvery503CarriesRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w http.ResponseWriter)
		want  string
	}{
		{"a 503 built without one gets the default", func(w http.ResponseWriter) {
			WriteError(w, Errorf(http.StatusServiceUnavailable, "could not record the event; retry").WithCause(errors.New("etcd")))
		}, "30"},
		{"a 503 with its own keeps it", func(w http.ResponseWriter) { WriteError(w, Unavailable(90e9, "busy")) }, "90"},
		{"an HTML 503 of the OAuth routes", func(w http.ResponseWriter) {
			_ = showPage(w, httptest.NewRequest(http.MethodGet, "/oauth/notion/connect", nil), refusal(http.StatusServiceUnavailable, pages.TryAgainTitle), nil)
		}, "30"},
		{"other statuses get none", func(w http.ResponseWriter) { WriteError(w, Errorf(http.StatusBadRequest, "bad")) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tc.write(rec)
			if got := rec.Header().Get("Retry-After"); got != tc.want {
				t.Fatalf("Retry-After %q, want %q", got, tc.want)
			}
		})
	}
}

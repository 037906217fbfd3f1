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
	"context"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
)

// What the time tracker may ask of its sessions (seed 004 §4: the UI
// shows each SyncLog's state and re-syncs a failed one), with the ingest
// token it already holds, on the ingest path:
//
//	GET  {ingest path}/sessions/{id}        → one session's state
//	GET  {ingest path}/sessions?id=…&id=…   → up to 100 at once
//	POST {ingest path}/sessions/{id}/retry  → a failed session tried again (202)
//
// A session is read from its SheetSync; once that is collected after the
// connection's syncRetention, from the connection's ledger
// (timesheet.LedgerRow), which still says "succeeded, row N".

// Session states as the routes answer them: seed 004 §2 SyncLog's
// status ('success' | 'failed' | 'pending'), "unknown" in a batch for a
// session never taken, "retrying" after a retry was asked.
const (
	statePending   = "pending"
	stateSuccess   = "success"
	stateFailed    = "failed"
	stateUnknown   = "unknown"
	stateRetrying  = "retrying"
	maxSessionRead = 100
)

// sessionState is one session's state, in seed 004 §2 SyncLog's words.
type sessionState struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// RowNumber is the sheet row the session was written to.
	RowNumber int64 `json:"rowNumber,omitempty"`
	// UpdatedRange is Google's range of the write, while the SheetSync
	// is kept.
	UpdatedRange string `json:"updatedRange,omitempty"`
	// AttemptedAt is when the last append was tried.
	AttemptedAt *time.Time `json:"attemptedAt,omitempty"`
	// RetryCount counts the appends tried (SheetSync status.attempts).
	RetryCount int32 `json:"retryCount,omitempty"`
	// NextAttemptAt is when a pending session is tried again (absent: as
	// soon as its batch runs).
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
	// FailureReason says why a session failed, or why a pending one
	// waits; null once it succeeded.
	FailureReason string `json:"failureReason,omitempty"`
	// Collected: the SheetSync is gone after its retention; the row is
	// the ledger's.
	Collected bool `json:"collected,omitempty"`
}

func sessionRoutes(d Deps) []Route {
	return []Route{
		{Pattern: "GET " + timesheet.IngestPrefix + "{digest}/sessions/{id}", Handler: readSession(d)},
		{Pattern: "GET " + timesheet.IngestPrefix + "{digest}/sessions", Handler: readSessions(d)},
		{Pattern: "POST " + timesheet.IngestPrefix + "{digest}/sessions/{id}/retry", Handler: retrySession(d)},
	}
}

// readSession answers one session's state: 200, or 404 for a session
// the connection never took (or took for another sheet, collected).
func readSession(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		conn, err := ingestConnection(r, d)
		if err != nil {
			return err
		}
		st, err := sessionOf(r.Context(), d, conn, r.PathValue("id"))
		if err != nil {
			return err
		}
		if st.Status == stateUnknown {
			return notTaken(st.ID)
		}
		writeSessionJSON(w, http.StatusOK, st)
		return nil
	}
}

// notTaken is the 404 of a session the connection never took.
func notTaken(id string) *Error {
	return Errorf(http.StatusNotFound, "no session %q was taken by this connection", id)
}

// readSessions answers the states of up to 100 sessions named by id
// query parameters, in order; a session never taken is "unknown".
func readSessions(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		conn, err := ingestConnection(r, d)
		if err != nil {
			return err
		}
		ids := r.URL.Query()["id"]
		if len(ids) == 0 || len(ids) > maxSessionRead {
			return Errorf(http.StatusBadRequest, "name 1 to %d sessions as id query parameters", maxSessionRead).
				WithDetails(map[string]any{"field": "id"})
		}
		out := make([]sessionState, len(ids))
		for i, id := range ids {
			if out[i], err = sessionOf(r.Context(), d, conn, id); err != nil {
				return err
			}
		}
		writeSessionJSON(w, http.StatusOK, map[string]any{"sessions": out})
		return nil
	}
}

// retrySession tries a failed session again (seed 004 §4's re-sync): 202
// and "retrying". Asked twice for the same failure, it asks the SheetSync
// controller once (the request names the failure, and the controller
// acts once per value), so one retry appends one row. A session pending
// already is answered 202 as it is; a succeeded one 200 with its row.
func retrySession(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		conn, err := ingestConnection(r, d)
		if err != nil {
			return err
		}
		id := r.PathValue("id")
		s, err := syncOf(r.Context(), d, conn, id)
		switch {
		case err != nil:
			return err
		case s == nil: // collected, or never taken: nothing to retry
			st, err := ledgerState(r.Context(), d, conn, id)
			if err != nil {
				return err
			}
			if st.Status == stateUnknown {
				return notTaken(id)
			}
			writeSessionJSON(w, http.StatusOK, st)
			return nil
		}
		st := stateOf(s)
		switch s.Status.Phase {
		case v1alpha1.SyncSucceeded:
			writeSessionJSON(w, http.StatusOK, st)
			return nil
		case v1alpha1.SyncFailed:
			if err := askRetry(r.Context(), d, s); err != nil {
				return err
			}
			st.Status = stateRetrying
		}
		writeSessionJSON(w, http.StatusAccepted, st)
		return nil
	}
}

// askRetry sets a failed SheetSync's requested-at annotation to a value
// naming its failure (metadata only: the status is the controller's).
func askRetry(ctx context.Context, d Deps, s *v1alpha1.SheetSync) error {
	value := "retry-failure-" + s.Status.CompletedAt.UTC().Format(time.RFC3339Nano)
	if s.Annotations[v1alpha1.RequestedAtAnnotation] == value {
		return nil
	}
	patch := client.MergeFrom(s.DeepCopy())
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[v1alpha1.RequestedAtAnnotation] = value
	if err := d.Client.Patch(ctx, s, patch); err != nil {
		return Unavailable(DefaultRetryAfter, "could not ask for the retry; retry").WithCause(err)
	}
	return nil
}

// sessionOf is a session's state: from its SheetSync, else from the
// ledger.
func sessionOf(ctx context.Context, d Deps, conn *v1alpha1.SheetConnection, id string) (sessionState, error) {
	s, err := syncOf(ctx, d, conn, id)
	switch {
	case err != nil:
		return sessionState{}, err
	case s != nil:
		st := stateOf(s)
		st.ID = id
		return st, nil
	}
	return ledgerState(ctx, d, conn, id)
}

// syncOf is the SheetSync of session id of conn, read from the API server
// (the webhook's cache holds no SheetSync: at 100,000 sessions a
// connection they would be the bulk of its memory, for a read a tracker
// makes now and then); nil when there is none, or the name is another
// session's.
func syncOf(ctx context.Context, d Deps, conn *v1alpha1.SheetConnection, id string) (*v1alpha1.SheetSync, error) {
	s := &v1alpha1.SheetSync{}
	err := d.APIReader.Get(ctx, types.NamespacedName{Namespace: conn.Namespace, Name: timesheet.SyncName(conn.Name, id)}, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, Unavailable(DefaultRetryAfter, "could not read the session; retry").WithCause(err)
	case s.Spec.Session.ID != id || s.Spec.ConnectionRef.Name != conn.Name:
		return nil, nil
	}
	return s, nil
}

// ledgerState is a session's state from its connection's ledger, in the
// webhook's cache: "success" with its row once its SheetSync was
// collected, else "unknown".
func ledgerState(ctx context.Context, d Deps, conn *v1alpha1.SheetConnection, id string) (sessionState, error) {
	var ledger corev1.Secret
	err := d.Client.Get(ctx, types.NamespacedName{Namespace: d.StateNamespace, Name: timesheet.LedgerName(conn.Namespace, conn.Name, id)}, &ledger)
	if client.IgnoreNotFound(err) != nil {
		return sessionState{}, Unavailable(DefaultRetryAfter, "could not read the session; retry").WithCause(err)
	}
	if row, ok := timesheet.LedgerRow(&ledger, conn, id); err == nil && ok {
		return sessionState{ID: id, Status: stateSuccess, RowNumber: row, Collected: true}, nil
	}
	return sessionState{ID: id, Status: stateUnknown}, nil
}

// stateOf is what a SheetSync's status says of its session, in the
// tracker's words.
func stateOf(s *v1alpha1.SheetSync) sessionState {
	st := sessionState{ID: s.Spec.Session.ID, Status: statePending, RowNumber: s.Status.RowNumber,
		UpdatedRange: s.Status.UpdatedRange, RetryCount: s.Status.Attempts, FailureReason: s.Status.LastError}
	switch s.Status.Phase {
	case v1alpha1.SyncSucceeded:
		st.Status, st.FailureReason = stateSuccess, ""
	case v1alpha1.SyncFailed:
		st.Status = stateFailed
	default:
		if t := s.Status.NextAttemptAt; t != nil {
			at := t.UTC()
			st.NextAttemptAt = &at
		}
	}
	if t := s.Status.AttemptedAt; t != nil {
		at := t.UTC()
		st.AttemptedAt = &at
	}
	return st
}

// writeSessionJSON answers with a session's state, never cached: it
// changes, and only the token's holder may read it.
func writeSessionJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Cache-Control", "no-store")
	WriteJSON(w, status, v)
}

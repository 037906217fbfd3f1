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
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
)

// The ingest route finds the connection in the cache by its path (and
// reads it live once), records each session as a SheetSync, reads a
// session's SheetSync live for its state and asks a failed one to retry
// (a metadata patch).
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetconnections,verbs=get;list;watch
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetsyncs,verbs=get;create;patch

// The sheets family takes a time tracker's sessions for a SheetConnection,
// which connects to Google under /oauth/sheets/….
var _ = family(Family{Name: "sheets", Routes: func(d Deps) []Route {
	return append([]Route{{Pattern: "POST " + timesheet.IngestPrefix + "{digest}", Handler: ingest(d)}}, sessionRoutes(d)...)
}, OAuth: &OAuthTarget{Target: targets.Sheets}})

// ingestCreators is how many SheetSyncs of one post are created at once.
const ingestCreators = 8

// Outcomes of one session of a post.
const (
	sessionAccepted  = "accepted"
	sessionDuplicate = "duplicate"
	sessionInvalid   = "invalid"
)

// sessionResult is one session's line in a batch answer.
type sessionResult struct {
	ID        string                `json:"id,omitempty"`
	Status    string                `json:"status"`
	SheetSync string                `json:"sheetSync,omitempty"`
	Error     *timesheet.FieldError `json:"error,omitempty"`
}

// ingest takes finished time-tracker sessions (seed 004 §4 sync flow step
// 1): the connection is found by its secret path and the Bearer ingest
// token must derive that path (compared in constant time), so a stranger
// gets the same 401 whether the path exists or not and creates nothing.
// Each valid session becomes one SheetSync named from its id before the
// answer: a session posted again is a duplicate that creates nothing
// (seed 004 §2 SyncLog unique key, §5 idempotency key).
func ingest(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		proven, err := ingestConnection(r, d)
		if err != nil {
			return err
		}
		conn, err := accepting(r.Context(), d, proven)
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if e := DecodeJSON(r, &raw); e != nil {
			return e
		}
		items, batch, perr := timesheet.Parse(raw)
		if perr != nil {
			return Errorf(http.StatusBadRequest, "%s", perr.Error()).WithDetails(map[string]any{"field": perr.Field})
		}
		results, err := createSyncs(r, d, conn, items)
		if err != nil {
			return Unavailable(DefaultRetryAfter, "could not record the sessions; retry (sessions already recorded are not recorded twice)").WithCause(err)
		}
		if !batch {
			return answerSession(w, results[0])
		}
		answerBatch(w, results)
		return nil
	}
}

// ingestConnection is the connection whose ingest path the request is on
// ({digest} of the ingest route and its sessions routes), when it carries
// that connection's ingest token as a Bearer token (compared in constant
// time): else 401, the same whether the path exists or not. The error
// sets WWW-Authenticate (RFC 6750 §3).
func ingestConnection(r *http.Request, d Deps) (*v1alpha1.SheetConnection, error) {
	refused := Errorf(http.StatusUnauthorized, "a valid ingest token is required as Authorization: Bearer <token>")
	token, ok := bearerToken(r)
	if !ok {
		return nil, refused.WithHeader("WWW-Authenticate", `Bearer realm="switchboard"`)
	}
	path := timesheet.IngestPrefix + r.PathValue("digest")
	var list v1alpha1.SheetConnectionList
	if err := d.routed(r.Context(), &list, index.RoutePaths, path); err != nil {
		return nil, err
	}
	if len(list.Items) != 1 || !capability.Equal(timesheet.IngestPath(token, list.Items[0].Namespace, list.Items[0].Name), path) {
		return nil, refused.WithHeader("WWW-Authenticate", `Bearer realm="switchboard", error="invalid_token"`)
	}
	return &list.Items[0], nil
}

// accepting returns the connection when it takes sessions, else a 409
// saying why. The cache may not yet hold the status that made it take
// them (a grant connected a moment ago, a header just fixed), so a
// refusal is confirmed on the live object first: the owner is never told
// to wait for what the API server already has. Only a caller who proved
// the ingest token gets here, so strangers cannot cost a read.
func accepting(ctx context.Context, d Deps, cached *v1alpha1.SheetConnection) (*v1alpha1.SheetConnection, error) {
	if ok, _ := timesheet.Accepting(cached); ok {
		return cached, nil
	}
	conn := cached
	live := &v1alpha1.SheetConnection{}
	switch err := d.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), live); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, Unavailable(DefaultRetryAfter, "could not read the connection; retry").WithCause(err)
	case live.UID == cached.UID && live.Status.IngestPath == cached.Status.IngestPath:
		conn = live
	}
	if ok, why := timesheet.Accepting(conn); !ok {
		return nil, Errorf(http.StatusConflict, "%s", why).WithDetails(map[string]any{"phase": string(conn.Status.Phase)})
	}
	return conn, nil
}

// answerSession answers a post of one session: 202 accepted, 200 a
// duplicate, 400 invalid.
func answerSession(w http.ResponseWriter, res sessionResult) error {
	switch res.Status {
	case sessionInvalid:
		return Errorf(http.StatusBadRequest, "%s", res.Error.Error()).WithDetails(map[string]any{"field": res.Error.Field})
	case sessionAccepted:
		WriteJSON(w, http.StatusAccepted, res)
	default:
		WriteJSON(w, http.StatusOK, res)
	}
	return nil
}

// answerBatch answers a batch with each session's result: 202 when one
// was accepted, else 200 when one was a duplicate, else 400.
func answerBatch(w http.ResponseWriter, results []sessionResult) {
	counts := map[string]int{}
	for _, res := range results {
		counts[res.Status]++
	}
	code := http.StatusOK
	switch {
	case counts[sessionAccepted] > 0:
		code = http.StatusAccepted
	case counts[sessionDuplicate] == 0:
		code = http.StatusBadRequest
	}
	WriteJSON(w, code, map[string]any{
		"accepted": counts[sessionAccepted], "duplicates": counts[sessionDuplicate], "invalid": counts[sessionInvalid],
		"results": results,
	})
}

// createSyncs creates a SheetSync for each valid session, several at once.
// An error is a write the API server did not take for a reason other than
// the object: the caller retries the post, and what was created is then a
// duplicate. A post of one session (the usual one) creates it on the
// request's own goroutine: on a loaded node each hand-over to another
// goroutine and back waits for a CPU.
func createSyncs(r *http.Request, d Deps, conn *v1alpha1.SheetConnection, items []timesheet.Item) ([]sessionResult, error) {
	results := make([]sessionResult, len(items))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		seen     = map[string]bool{}
		sem      = make(chan struct{}, ingestCreators)
	)
	create := func(i int, it timesheet.Item) {
		s := timesheet.NewSync(conn, it.Session)
		res := sessionResult{ID: it.ID, Status: sessionAccepted, SheetSync: s.Name}
		err := d.Client.Create(r.Context(), s)
		var st apierrors.APIStatus
		switch {
		case err == nil:
		case apierrors.IsAlreadyExists(err):
			res.Status = sessionDuplicate
		case apierrors.IsInvalid(err) && errors.As(err, &st):
			res = sessionResult{ID: it.ID, Status: sessionInvalid, Error: &timesheet.FieldError{Field: "session", Message: st.Status().Message}}
		default:
			mu.Lock()
			firstErr = errors.Join(firstErr, err)
			mu.Unlock()
		}
		results[i] = res
	}
	for i, it := range items {
		results[i] = sessionResult{ID: it.ID, Status: sessionInvalid, Error: it.Err}
		if it.Err != nil {
			continue
		}
		if seen[it.Session.ID] {
			results[i] = sessionResult{ID: it.ID, Status: sessionDuplicate, SheetSync: timesheet.SyncName(conn.Name, it.ID)}
			continue
		}
		seen[it.Session.ID] = true
		if len(items) == 1 {
			create(i, it)
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			create(i, it)
		}()
	}
	wg.Wait()
	return results, firstErr
}

// bearerToken reads an RFC 6750 Bearer token from the Authorization header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

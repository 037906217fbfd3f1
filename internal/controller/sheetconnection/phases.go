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

package sheetconnection

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/timesheet"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
)

// Reasons of SheetConnection conditions.
const (
	// SheetNotFoundReason: the spreadsheet or the sheet named in the spec
	// does not exist (or the account cannot see it).
	SheetNotFoundReason = "SheetNotFound"
	// HeadersMissingReason: a mapped header name is not in row 1.
	HeadersMissingReason = "HeadersMissing"
	// ColumnClashReason: two fields resolved to one column.
	ColumnClashReason = "ColumnClash"
)

// ingestPath derives the ingest path from the ingest token.
func (r *Reconciler) ingestPath(ctx context.Context, obj *v1alpha1.SheetConnection, _ *runner.Run) runner.Outcome {
	path, out := grant.SecretPath(ctx, r.Client, obj, obj.Spec.IngestTokenSecretRef.Name, timesheet.IngestTokenKey, timesheet.MinTokenLength, timesheet.IngestPath)
	if path != "" {
		obj.Status.IngestPath = path
	}
	if !out.IsContinue() && obj.Status.Phase == "" {
		obj.Status.Phase = v1alpha1.ConnectionRevoked
	}
	return out
}

// authorised runs the grant phase and turns its outcome into the seed's
// states: no grant stored yet is Revoked (seed 004 §4: revoked → active
// when the code exchange stores one); a grant Google refuses is Error.
func (r *Reconciler) authorised(ctx context.Context, obj *v1alpha1.SheetConnection, run *runner.Run) runner.Outcome {
	out := r.grant.Grant(ctx, obj, run)
	switch out.Reason() {
	case "":
	case v1alpha1.ReauthRequiredReason:
		obj.Status.Phase = v1alpha1.ConnectionError
		if errors.Is(out.Err(), oauth.ErrNotConnected) || !r.hasGrant(ctx, obj) {
			obj.Status.Phase = v1alpha1.ConnectionRevoked
		}
	case v1alpha1.SecretNotFoundReason:
		obj.Status.Phase = v1alpha1.ConnectionRevoked
	}
	return out
}

// hasGrant reports whether the token Secret holds a refresh token: a
// connection without one was never connected, or was disconnected
// (Revoked), rather than refused (Error).
func (r *Reconciler) hasGrant(ctx context.Context, obj *v1alpha1.SheetConnection) bool {
	var sec corev1.Secret
	err := r.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: obj.Spec.OAuth.TokenSecretRef.Name}, &sec)
	return err == nil && len(sec.Data[oauth.KeyRefreshToken]) > 0
}

// granted records the grant's account (the Grant phase records its
// expiry); a grant other than the one Google refused clears the refusal.
func granted(obj *v1alpha1.SheetConnection, tok oauth.Token, _ *runner.Run) {
	st := &obj.Status
	if sub := tok.Extra[oauth.KeySubject]; sub != "" {
		st.GoogleUserID = sub
	}
	if st.RefusedGrant != nil && st.RefusedGrant.GrantedAt != tok.Extra[oauth.KeyGrantedAt] {
		st.RefusedGrant = nil
	}
}

// refused keeps the connection in Error while its grant is the one Google
// refused with 401 or 403 (here or at an append): refreshing it would not
// help, a person must connect again (seed 004 §4 active → error).
func (r *Reconciler) refused(_ context.Context, obj *v1alpha1.SheetConnection, _ *runner.Run) runner.Outcome {
	rg := obj.Status.RefusedGrant
	if rg == nil {
		return runner.Continue()
	}
	obj.Status.Phase = v1alpha1.ConnectionError
	return r.grant.Reauth(obj, "Append", fmt.Errorf("google refused the grant at %s: %s", rg.At.UTC().Format(time.RFC3339), rg.Message))
}

// Refuse records on obj that Google answered 401 or 403 to a call made
// with the grant granted at grantedAt: the connection goes to Error until
// a new grant is stored.
func Refuse(obj *v1alpha1.SheetConnection, grantedAt string, at time.Time, err error) {
	msg := err.Error()
	if len(msg) > 1000 {
		msg = msg[:1000]
	}
	obj.Status.RefusedGrant = &v1alpha1.RefusedGrant{GrantedAt: grantedAt, At: metav1.NewTime(at), Message: msg}
	obj.Status.Phase = v1alpha1.ConnectionError
	status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionFalse, v1alpha1.ReauthRequiredReason, msg)
	status.MarkStalled(obj, v1alpha1.ReauthRequiredReason, msg)
}

// sheet resolves spec.sheet to its id and title, reads the time zone and
// row 1, and resolves the mapping's header names to column letters (seed
// 004 §2 ColumnMappingConfiguration, §5).
//
// A reconcile within HeaderRecheck of the last read, with the same spec
// and grant, does not read again (reads.fresh): a token refresh, an
// append's tally and the watch of the connect Secret each reconcile the
// connection, and each read is two calls of Google's quota.
func (r *Reconciler) sheet(ctx context.Context, obj *v1alpha1.SheetConnection, run *runner.Run) runner.Outcome {
	st := &obj.Status
	if at, ok := r.reads.fresh(obj, run); ok {
		run.RequeueAt(at.Add(HeaderRecheck))
		return runner.Continue()
	}
	r.reads.forget(obj.UID)
	ss, err := r.Sheets.Spreadsheet(ctx, grant.Of(run).Token, obj.Spec.SpreadsheetID)
	if out, failed := r.googleFailed(obj, run, "read spreadsheet "+obj.Spec.SpreadsheetID, err); failed {
		return out
	}
	found, err := Select(obj.Spec.Sheet, ss)
	if err != nil {
		return notFound(obj, err)
	}
	id := found.ID
	st.SheetID, st.SheetTitle, st.TimeZone = &id, found.Title, ss.TimeZone
	header, err := r.Sheets.Row(ctx, grant.Of(run).Token, obj.Spec.SpreadsheetID, found.Title, 1)
	if out, failed := r.googleFailed(obj, run, "read row 1 of "+gsheets.QuoteTitle(found.Title), err); failed {
		return out
	}
	cols, missing := Resolve(obj.Spec.ColumnMapping, header)
	st.ResolvedColumns, st.MissingHeaders = cols, missing
	r.reads.read(obj, run)
	st.Phase = v1alpha1.ConnectionActive
	run.RequeueAt(run.Now.Add(HeaderRecheck))
	if clash := Clash(cols); clash != "" {
		msg := clash + ": give each field its own column in spec.columnMapping; sessions are refused until then"
		status.Set(obj, v1alpha1.HeaderValidCondition, metav1.ConditionFalse, ColumnClashReason, msg)
		return runner.Stall(ColumnClashReason, errors.New(msg)).RecheckAfter(HeaderRecheck)
	}
	if len(missing) > 0 {
		msg := "row 1 of " + gsheets.QuoteTitle(found.Title) + " lacks the mapped headers " + strings.Join(quoteAll(missing), ", ") +
			": rename a header in the sheet or change spec.columnMapping; sessions are refused until then"
		status.Set(obj, v1alpha1.HeaderValidCondition, metav1.ConditionFalse, HeadersMissingReason, msg)
		return runner.Stall(HeadersMissingReason, errors.New(msg)).RecheckAfter(HeaderRecheck)
	}
	status.Set(obj, v1alpha1.HeaderValidCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, "every mapped column resolved")
	return runner.Continue()
}

// Select finds the sheet sel names in ss: by id when it has one, else by
// title. The error says which sheet is missing.
func Select(sel v1alpha1.SheetSelector, ss gsheets.Spreadsheet) (*gsheets.Sheet, error) {
	for i := range ss.Sheets {
		s := &ss.Sheets[i]
		if (sel.ID != nil && s.ID == *sel.ID) || (sel.ID == nil && s.Title == sel.Title) {
			return s, nil
		}
	}
	want := strconv.Quote(sel.Title)
	if sel.ID != nil {
		want = "with id " + strconv.FormatInt(*sel.ID, 10)
	}
	return nil, fmt.Errorf("spreadsheet %s has no sheet %s", ss.ID, want)
}

// notFound stalls on a spreadsheet or sheet Google does not show: the grant
// works (Active), but sessions are refused until a person fixes the spec
// or shares the sheet.
func notFound(obj *v1alpha1.SheetConnection, err error) runner.Outcome {
	obj.Status.Phase = v1alpha1.ConnectionActive
	obj.Status.ResolvedColumns = nil
	status.Set(obj, v1alpha1.HeaderValidCondition, metav1.ConditionFalse, SheetNotFoundReason, err.Error())
	return runner.Stall(SheetNotFoundReason, err).RecheckAfter(HeaderRecheck)
}

func readyMessage(obj *v1alpha1.SheetConnection) string {
	return "Active: appending to " + gsheets.QuoteTitle(obj.Status.SheetTitle) + " of spreadsheet " + obj.Spec.SpreadsheetID
}

// Clash names two fields that resolved to one column (a header name found
// in the column another field names by letter), or "".
func Clash(cols map[string]string) string {
	fields := make([]string, 0, len(cols))
	for f := range cols {
		fields = append(fields, f)
	}
	slices.Sort(fields)
	seen := map[string]string{}
	for _, f := range fields {
		if other, ok := seen[cols[f]]; ok {
			return fmt.Sprintf("fields %s and %s both resolve to column %s", other, f, cols[f])
		}
		seen[cols[f]] = f
	}
	return ""
}

// googleFailed turns a failed Sheets call into an outcome: 401 and 403
// refuse the grant (Error), 404 stalls on the spreadsheet, the rest is
// retried.
func (r *Reconciler) googleFailed(obj *v1alpha1.SheetConnection, run *runner.Run, what string, err error) (runner.Outcome, bool) {
	switch {
	case err == nil:
		return runner.Continue(), false
	case errors.Is(err, gsheets.ErrUnauthorized):
		Refuse(obj, grant.Of(run).ID, run.Now, fmt.Errorf("%s: %w", what, err))
		return r.refused(context.Background(), obj, run), true
	case errors.Is(err, gsheets.ErrNotFound):
		return notFound(obj, fmt.Errorf("%s: %w", what, err)), true
	}
	return runner.Transient(v1alpha1.UpstreamUnavailableReason, fmt.Errorf("%s: %w", what, err)), true
}

// active: the grant works and every mapped column resolved (every phase
// continued); the runner marks the connection Ready with this message.
func active(obj *v1alpha1.SheetConnection) string {
	obj.Status.Phase = v1alpha1.ConnectionActive
	return readyMessage(obj)
}

// DeletionPolicyAnnotation says what deleting a SheetConnection does to
// its Google grant: Revoke (the default, and any other value) revokes it
// at Google and removes it from the token Secret, as spec.suspend does;
// Retain leaves both as they are, for a connection kept in Git that a
// GitOps tool may delete and apply again, or one moved to another
// cluster: the connection applied again with the same token Secret is
// Active at once, with no new consent. docs/sheetconnection.md says why
// Revoke is the default.
const DeletionPolicyAnnotation = "switchboard.dev/deletion-policy"

// RetainGrant is the DeletionPolicyAnnotation value that keeps the grant.
const RetainGrant = "Retain"

// release is the deletion: the grant is revoked unless the connection's
// deletion policy retains it.
func (r *Reconciler) release(ctx context.Context, obj *v1alpha1.SheetConnection, run *runner.Run) runner.Outcome {
	if strings.EqualFold(obj.Annotations[DeletionPolicyAnnotation], RetainGrant) {
		log.FromContext(ctx).Info("deleted with deletion policy Retain: the Google grant is kept in its token Secret",
			"sheetConnection", klog.KObj(obj), "secret", obj.Spec.OAuth.TokenSecretRef.Name)
		return runner.Continue()
	}
	return r.disconnect(ctx, obj, run)
}

// disconnect revokes the grant at Google and forgets it (seed 004 §4
// active → revoked), when the connection is suspended or deleted. Pending
// syncs wait: the SheetSync controller appends only for an Active
// connection.
func (r *Reconciler) disconnect(ctx context.Context, obj *v1alpha1.SheetConnection, _ *runner.Run) runner.Outcome {
	clientKey, tokenKey := oauth.Keys(obj.Namespace, obj.Spec.OAuth)
	if err := r.OAuth.Disconnect(ctx, targets.Sheets.Provider, clientKey, tokenKey); err != nil {
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	if obj.Status.Phase != v1alpha1.ConnectionRevoked && r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, v1alpha1.RevokedReason, "Disconnect", "the Google grant was revoked; connect again to resume")
	}
	obj.Status.Phase = v1alpha1.ConnectionRevoked
	obj.Status.RefusedGrant = nil
	r.reads.forget(obj.UID)
	status.Set(obj, v1alpha1.AuthenticatedCondition, metav1.ConditionFalse, v1alpha1.RevokedReason, "disconnected: the grant was revoked at Google")
	return runner.Continue()
}

// Resolve maps each field to a column letter: letters stand for
// themselves, header names are looked up in row 1 (exact text, first
// match). missing lists the header names not found, sorted.
func Resolve(mapping map[string]v1alpha1.ColumnRef, header []string) (cols map[string]string, missing []string) {
	cols = make(map[string]string, len(mapping))
	for field, ref := range mapping {
		if _, err := gsheets.ColumnIndex(string(ref)); err == nil {
			cols[field] = string(ref)
			continue
		}
		if i := slices.Index(header, string(ref)); i >= 0 {
			cols[field] = gsheets.ColumnLetters(i + 1)
			continue
		}
		missing = append(missing, string(ref))
	}
	slices.Sort(missing)
	return cols, missing
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}

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

// Package sheetconnection is the SheetConnection controller (seed 004): the
// Google grant refreshed 5 minutes early (and a twentieth of that more,
// grant.RefreshLead), the spreadsheet and sheet resolved, the column
// mapping checked against row 1, the ingest path derived, and the Active /
// Revoked / Error states of seed 004 §4. The rows themselves are appended
// by the SheetSync controller.
package sheetconnection

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream/gsheets"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetconnections,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetconnections/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=sheetconnections/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Sheets is what the controller reads of the Google Sheets API;
// *gsheets.Client is the implementation.
type Sheets interface {
	Spreadsheet(ctx context.Context, token, spreadsheetID string) (gsheets.Spreadsheet, error)
	Row(ctx context.Context, token, spreadsheetID, sheetTitle string, row int) ([]string, error)
}

// Grants is the OAuth engine: tokens, and the revocation of a grant when a
// person disconnects. *oauth.Engine is the implementation.
type Grants interface {
	oauth.TokenSource
	Disconnect(ctx context.Context, p oauth.Provider, clientKey, tokenKey types.NamespacedName) error
}

// Retries spaces the retries of Sheets calls that failed transiently: 1,
// 2, 4, 8 and 16 seconds ±10 %, never sooner than Retry-After, then the
// header recheck. Seed 004 names no schedule for the connection; this is
// Google's, as CalendarWatch uses it (seed 002 "Retry Logic").
var Retries = outbound.Schedule{Base: time.Second, Retries: 5, Max: outbound.MaxRetryAfter}

// HeaderRecheck is how often row 1 is read again: a person may rename a
// header at any time, and Google sends no event for it.
const HeaderRecheck = 10 * time.Minute

// Reconciler reconciles SheetConnections.
type Reconciler struct {
	client.Client
	OAuth    Grants
	Sheets   Sheets
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// PublicURL is the webhook server's public base URL, for the connect
	// link.
	PublicURL string
	// Reports is the mailbox the SheetSync controller posts to.
	Reports *Reports
	// Workers is how many objects are reconciled at once (DefaultWorkers
	// when 0).
	Workers int

	grant *grant.Phases[*v1alpha1.SheetConnection]
	// reads is when each connection last read its sheet (reads.go).
	reads reads
}

// Runner builds the reconcile runner.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.SheetConnection] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.grant = grant.New[*v1alpha1.SheetConnection](grant.Deps{Client: r.Client, Tokens: r.OAuth, Recorder: r.Recorder, PublicURL: r.PublicURL},
		targets.Sheets).OnGrant(granted).WithRefreshLead()
	return &runner.Runner[*v1alpha1.SheetConnection]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New: func() *v1alpha1.SheetConnection { return &v1alpha1.SheetConnection{} },
		Normal: []runner.Phase[*v1alpha1.SheetConnection]{
			r.reports, r.ingestPath, r.grant.Connect, r.authorised, r.refused, r.sheet,
		},
		Ready:     active,
		Suspend:   []runner.Phase[*v1alpha1.SheetConnection]{r.disconnect},
		Delete:    []runner.Phase[*v1alpha1.SheetConnection]{r.release},
		Transient: Retries,
		Exhausted: func(*v1alpha1.SheetConnection) time.Duration { return HeaderRecheck },
	}
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.SheetConnection{}, builder.WithPredicates(status.SpecOrRequest())).
		// The token Secret the OAuth callback writes reconciles its
		// connections: a new grant turns Revoked or Error into Active.
		Watches(grant.SecretWatch(r, &v1alpha1.SheetConnectionList{})).
		// The connect Secret.
		Owns(&corev1.Secret{}).
		// What the appends found (reports.go).
		WatchesRawSource(r.mailbox().Source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: wire.Workers{N: r.Workers}.Or(DefaultWorkers)}).
		Named("sheetconnection").
		Complete(r.Runner())
}

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

// Package notionsignup keeps NotionSignups: it publishes each one for the
// webhook's start route, counts the integrations it made, and (through
// the OAuth Receiver, SignUp) makes or reconnects the NotionIntegration
// of each Notion workspace that signs up.
package notionsignup

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=notionsignups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionsignups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionsignups/finalizers,verbs=update
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// clientRecheck is how often a sign-up whose client Secret is missing
// looks again: a person creates that Secret, and the manager does not
// watch Secrets it did not label.
const clientRecheck = time.Minute

// Reconciler reconciles NotionSignups.
type Reconciler struct {
	client.Client
	// Store reads the OAuth client Secret (from the API server).
	Store    *oauth.Store
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// PublicURL is the webhook's public base URL, for status.url.
	PublicURL string
	// StateNamespace is the webhook's namespace, where each sign-up is
	// published (oauth.PublishSignUp).
	StateNamespace string
}

// Runner is the reconcile skeleton with NotionSignup's phases.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.NotionSignup] {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return &runner.Runner[*v1alpha1.NotionSignup]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:    func() *v1alpha1.NotionSignup { return &v1alpha1.NotionSignup{} },
		Normal: []runner.Phase[*v1alpha1.NotionSignup]{r.client, r.count, r.publish},
		Delete: []runner.Phase[*v1alpha1.NotionSignup]{r.unpublish},
		Ready:  readyMessage,
	}
}

// client reads the public integration's client id: the consent page's URL
// carries it, and the webhook may not read the Secret.
func (r *Reconciler) client(ctx context.Context, s *v1alpha1.NotionSignup, _ *runner.Run) runner.Outcome {
	creds, err := r.Store.LoadClient(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Spec.OAuth.ClientSecretRef.Name})
	switch {
	case oauth.IsMissingSecret(err):
		return runner.Stall(v1alpha1.SecretNotFoundReason,
			fmt.Errorf("the OAuth client Secret %q needs keys client_id and client_secret: %w", s.Spec.OAuth.ClientSecretRef.Name, err)).
			RecheckAfter(clientRecheck)
	case err != nil:
		return runner.Transient(v1alpha1.SecretReadFailedReason, err)
	}
	s.Status.ClientID = creds.ID
	return runner.Continue()
}

// count counts the integrations the sign-up made (from the cache, which
// every integration's change brings back here).
func (r *Reconciler) count(ctx context.Context, s *v1alpha1.NotionSignup, _ *runner.Run) runner.Outcome {
	var list v1alpha1.NotionIntegrationList
	if err := r.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{v1alpha1.SignUpLabel: s.Name}); err != nil {
		return runner.Transient("ListFailed", err)
	}
	s.Status.Integrations = int32(min(len(list.Items), math.MaxInt32)) //nolint:gosec // G115: bounded just above
	s.Status.Open = !s.Spec.Closed && s.Status.Integrations < s.Spec.MaxIntegrations
	s.Status.URL = StartURL(r.PublicURL, s.Namespace, s.Name)
	return runner.Continue()
}

// publish writes what the webhook's start route reads into its
// namespace.
func (r *Reconciler) publish(ctx context.Context, s *v1alpha1.NotionSignup, _ *runner.Run) runner.Outcome {
	err := oauth.PublishSignUp(ctx, r.Client, r.StateNamespace, oauth.PublishedSignUp{Target: targets.Notion.Name,
		Namespace: s.Namespace, Name: s.Name, UID: s.UID, ClientID: s.Status.ClientID, Closed: s.Spec.Closed})
	if err != nil {
		return runner.Transient("PublishFailed", err)
	}
	return runner.Continue()
}

// unpublish closes the start URL of a deleted sign-up. The integrations
// it made stay: they carry no owner reference to it.
func (r *Reconciler) unpublish(ctx context.Context, s *v1alpha1.NotionSignup, _ *runner.Run) runner.Outcome {
	if err := oauth.UnpublishSignUp(ctx, r.Client, r.StateNamespace, targets.Notion.Name, s.Namespace, s.Name); err != nil {
		return runner.Transient("UnpublishFailed", err)
	}
	return runner.Continue()
}

func readyMessage(s *v1alpha1.NotionSignup) string {
	switch {
	case s.Spec.Closed:
		return fmt.Sprintf("closed; %d integrations made", s.Status.Integrations)
	case !s.Status.Open:
		return fmt.Sprintf("full: %d of %d integrations; workspaces that signed up may sign up again", s.Status.Integrations, s.Spec.MaxIntegrations)
	}
	return fmt.Sprintf("open: %d of %d integrations", s.Status.Integrations, s.Spec.MaxIntegrations)
}

// comesOrGoes passes an integration's creation and deletion, and a change
// of the sign-up that made it: what changes a sign-up's count.
var comesOrGoes = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return e.ObjectOld.GetLabels()[v1alpha1.SignUpLabel] != e.ObjectNew.GetLabels()[v1alpha1.SignUpLabel]
}}

// StartURL is the public start URL of the sign-up namespace/name.
func StartURL(publicURL, namespace, name string) string {
	if publicURL == "" {
		return ""
	}
	return strings.TrimSuffix(publicURL, "/") + "/signup/" + targets.Notion.Name + "/" + namespace + "/" + name
}

// setup registers the controller. A sign-up is reconciled on its spec's
// changes and requests, and whenever an integration it made comes or goes
// (its count).
func (r *Reconciler) setup(mgr ctrl.Manager, opts controller.Options) error {
	made := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if name := o.GetLabels()[v1alpha1.SignUpLabel]; name != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.NotionSignup{}, builder.WithPredicates(status.SpecOrRequest())).
		Watches(&v1alpha1.NotionIntegration{}, made, builder.WithPredicates(comesOrGoes)).
		WithOptions(opts).
		Named("notionsignup").
		Complete(r.Runner())
}

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

// Package receivelink is the ReceiveLink controller (seed 003): it checks
// the blob exists, mints a short token that is unique across the cluster
// and seals the link's identity in the long token, and at the expiry
// instant deletes the blob and every key of the link. A sweep finds what a
// crash left behind.
package receivelink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// +kubebuilder:rbac:groups=switchboard.dev,resources=receivelinks,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=switchboard.dev,resources=receivelinks/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=receivelinks/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Blobs is what the controller does in object storage; *blob.Client is the
// implementation.
type Blobs interface {
	Head(ctx context.Context, o blob.Object) (blob.Info, error)
	Delete(ctx context.Context, o blob.Object) error
}

// Defaults of the Reconciler.
const (
	// MaxLifetime is seed 003's limit: a link lives at most 14 days.
	MaxLifetime = 14 * 24 * time.Hour
	// BlobRecheck is the slow timer of a link whose blob is missing or
	// whose storage refuses it: a person may upload it later.
	BlobRecheck = 5 * time.Minute
	// KeysRecheck is how often a link whose keys are unusable looks again
	// (the key Secret is a person's, not watched).
	KeysRecheck = time.Minute
	// MintTries is seed 003's storeShortToken: five tries, then give up.
	MintTries = 5
	// DefaultDeleteRate bounds S3 deletes per second across the manager:
	// 10,000 links expiring in one minute must not send 10,000 deletes at
	// once.
	DefaultDeleteRate = 100
	// DefaultWorkers is how many links are reconciled at once. A link's
	// work is waiting on the API server and S3, not the CPU: 16 workers
	// minted 2.7 times as many links per second as 4 in the benchmark
	// (hack/bench -suite receive), and the delete rate stays bounded.
	DefaultWorkers = 16
)

// Reconciler reconciles ReceiveLinks.
type Reconciler struct {
	// Client reads through the cache; the short-token objects and share
	// Secrets carry the managed-by label, so they are cached.
	client.Client
	// APIReader reads the Secrets people create (credentials, keys), which
	// are not cached.
	APIReader client.Reader
	Blobs     Blobs
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	// Namespace holds the short-token objects (the operator's own).
	Namespace string
	// DefaultKeys is the key Secret of links that name none
	// (--link-key-secret); the controller creates it with one key when it
	// does not exist.
	DefaultKeys types.NamespacedName
	// PublicURL is the webhook server's public base URL: the share URL is
	// PublicURL + /r/{short}.
	PublicURL string
	// Deletes bounds blob deletes (nil: DefaultDeleteRate per second).
	Deletes *rate.Limiter
	// NewShort mints short tokens (linktoken.NewShort when nil; tests force
	// collisions with it).
	NewShort func() string
	// Workers is the number of links reconciled at once (DefaultWorkers
	// when 0).
	Workers int
	// Overdue receives links the sweep found past their expiry and not yet
	// expired by this controller.
	Overdue chan event.GenericEvent
}

// Runner builds the reconcile runner.
func (r *Reconciler) Runner() *runner.Runner[*v1alpha1.ReceiveLink] {
	r.defaults()
	return &runner.Runner[*v1alpha1.ReceiveLink]{
		Client: r.Client, Recorder: r.Recorder, Clock: r.Clock,
		New:    func() *v1alpha1.ReceiveLink { return &v1alpha1.ReceiveLink{} },
		Normal: []runner.Phase[*v1alpha1.ReceiveLink]{r.adopt, r.expiry, r.expire, r.blob, r.mint},
		Ready:  active,
		Delete: []runner.Phase[*v1alpha1.ReceiveLink]{r.release},
	}
}

func (r *Reconciler) defaults() {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Deletes == nil {
		r.Deletes = rate.NewLimiter(DefaultDeleteRate, DefaultDeleteRate/5)
	}
	if r.NewShort == nil {
		r.NewShort = linktoken.NewShort
	}
	if r.Workers == 0 {
		r.Workers = DefaultWorkers
	}
	if r.Overdue == nil {
		r.Overdue = make(chan event.GenericEvent, 1024)
	}
}

// SetupWithManager registers the controller and its sweep.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	rn := r.Runner()
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.ReceiveLink{}, builder.WithPredicates(status.SpecOrRequest())).
		// The share Secret: deleted by hand, it is minted again.
		Owns(&corev1.Secret{}).
		WatchesRawSource(source.Channel(r.Overdue, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Workers}).
		Named("receivelink").
		Complete(rn)
}

// expiresAt is when the link stops resolving: spec.expiresAt, or its
// origin (its creation, or the original one a restore kept: origin) plus
// spec.ttl.
func expiresAt(l *v1alpha1.ReceiveLink, origin time.Time) time.Time {
	if l.Spec.ExpiresAt != nil {
		return l.Spec.ExpiresAt.Time
	}
	if l.Spec.TTL != nil {
		return origin.Add(l.Spec.TTL.Duration)
	}
	return origin
}

// linkExpiry is the expiry the expiry phase put in status (the phases
// after it, and the sweep, read it there), or, before any, the creation
// plus spec.ttl.
func linkExpiry(l *v1alpha1.ReceiveLink) time.Time {
	if l.Status.ExpiresAt != nil {
		return l.Status.ExpiresAt.Time
	}
	return expiresAt(l, l.CreationTimestamp.Time)
}

// object is the link's blob with its credentials.
func (r *Reconciler) object(ctx context.Context, l *v1alpha1.ReceiveLink) (blob.Object, error) {
	creds, err := loadCredentials(ctx, r.APIReader, l.Namespace, l.Spec.Blob.CredentialsSecretRef)
	if err != nil {
		return blob.Object{}, err
	}
	return blob.Object{Bucket: l.Spec.Blob.Bucket, Key: l.Spec.Blob.Key, Region: l.Spec.Blob.Region, Credentials: creds}, nil
}

// deleteBlobNow deletes a blob at the bounded rate, waiting its turn (the
// sweep has no worker to give back).
func (r *Reconciler) deleteBlobNow(ctx context.Context, o blob.Object) error {
	if err := r.Deletes.Wait(ctx); err != nil {
		return err
	}
	return r.removeBlob(ctx, o)
}

// removeBlob deletes a blob; one already gone is deleted.
func (r *Reconciler) removeBlob(ctx context.Context, o blob.Object) error {
	if err := r.Blobs.Delete(ctx, o); err != nil && !errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("delete blob s3://%s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// deleteBlob deletes a blob at the bounded rate. A wait longer than a
// second gives the worker back and comes again.
func (r *Reconciler) deleteBlob(ctx context.Context, o blob.Object) (wait time.Duration, err error) {
	res := r.Deletes.Reserve()
	if d := res.Delay(); d > time.Second {
		res.Cancel()
		return d, nil
	} else if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
	return 0, r.removeBlob(ctx, o)
}

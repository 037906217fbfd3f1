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

package receivelink

import (
	"cmp"
	"flag"
	"fmt"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// Controller is ReceiveLink's controller and its sweep, as the manager
// lists them.
type Controller struct {
	Workers wire.Workers
	// Namespace holds the short-token objects (the operator's; the
	// webhook's --link-namespace).
	Namespace string
	// KeySecret names the key Secret, in Namespace, of links that name
	// none (DefaultKeySecret when empty).
	KeySecret string
	// DeleteRate bounds S3 deletes per second (DefaultDeleteRate when 0).
	DeleteRate float64
	// SweepInterval and MirrorInterval are the sweep's (its defaults
	// when 0).
	SweepInterval, MirrorInterval time.Duration
}

// DefaultKeySecret is the key Secret of links that name none.
const DefaultKeySecret = "switchboard-link-keys"

// Name is the controller's name and flag prefix.
func (*Controller) Name() string { return "receivelink" }

// OwnNamespaces is where the short-token objects and key Secrets are.
func (c *Controller) OwnNamespaces() []string { return []string{c.Namespace} }

// BindFlags registers the controller's flags; Namespace's value before
// the call is --link-namespace's default.
func (c *Controller) BindFlags(fs *flag.FlagSet) {
	c.Workers.Bind(fs, c.Name(), "ReceiveLinks", DefaultWorkers)
	fs.IntVar(&c.Workers.N, "link-workers", DefaultWorkers, "Deprecated: use --receivelink-workers.")
	fs.StringVar(&c.Namespace, "link-namespace", c.Namespace, "Namespace of the ReceiveLink short-token objects (the webhook's --link-namespace); the default is the pod's namespace.")
	fs.StringVar(&c.KeySecret, "link-key-secret", DefaultKeySecret, "Secret in --link-namespace with the AES-256 keys that seal ReceiveLinks naming no encryptionKeySecretRef; created with one key when missing.")
	fs.Float64Var(&c.DeleteRate, "blob-delete-rate", DefaultDeleteRate, "Most S3 deletes per second of expired ReceiveLinks' blobs, across the manager.")
	fs.DurationVar(&c.SweepInterval, "link-sweep-interval", DefaultSweepInterval, "How often the ReceiveLink sweep looks for short-token objects whose link is gone and links past their expiry.")
	fs.DurationVar(&c.MirrorInterval, "link-mirror-interval", DefaultMirrorInterval, "How often the copies of the links' S3 credentials and key Secrets in --link-namespace are compared with their sources.")
}

// Setup registers the controller and its sweep with the S3 client.
func (c *Controller) Setup(mgr ctrl.Manager, d wire.Deps) error {
	bc, err := blob.New(blob.Options{Endpoint: d.Outbound.Endpoint(upstream.S3, ""), HTTPClient: d.Outbound.HTTPClient()})
	if err != nil {
		return err
	}
	deleteRate := c.DeleteRate
	if deleteRate <= 0 {
		deleteRate = DefaultDeleteRate
	}
	r := &Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Blobs: bc, Recorder: wire.Recorder(mgr, c.Name()),
		Namespace: c.Namespace, DefaultKeys: types.NamespacedName{Namespace: c.Namespace, Name: cmp.Or(c.KeySecret, DefaultKeySecret)}, PublicURL: d.PublicURL,
		Deletes: rate.NewLimiter(rate.Limit(deleteRate), max(int(deleteRate/5), 1)), Workers: c.Workers.N,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	sweep := &Sweeper{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Reconciler: r,
		Namespace: c.Namespace, Interval: c.SweepInterval, MirrorInterval: c.MirrorInterval, Registerer: d.Registerer, Shard: d.Shard,
		Watch: d.Watch}
	if err := mgr.Add(sweep); err != nil {
		return fmt.Errorf("add the ReceiveLink sweep: %w", err)
	}
	return nil
}

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

package controller

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/blob"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/outbound"
	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// LinksDeps are what the ReceiveLink controller and its sweep need.
type LinksDeps struct {
	Out *outbound.Client
	// Namespace holds the short-token objects (the operator's).
	Namespace string
	// DefaultKeys is the key Secret of links that name none.
	DefaultKeys types.NamespacedName
	// PublicURL is the webhook server's public base URL (share URLs).
	PublicURL string
	// DeleteRate bounds S3 deletes per second.
	DeleteRate float64
	// Workers is how many links are reconciled at once (the
	// Reconciler's default when 0).
	Workers int
	// SweepInterval is how often the sweep runs.
	SweepInterval time.Duration
	// MirrorInterval is how often the copies of the links' Secrets in
	// Namespace are compared with their sources (the sweep's default when
	// 0).
	MirrorInterval time.Duration
	// Registerer receives the sweep's metrics.
	Registerer prometheus.Registerer
}

// SetupLinks registers the ReceiveLink controller and its sweep.
func SetupLinks(mgr ctrl.Manager, d LinksDeps) error {
	bc, err := blob.New(blob.Options{Endpoint: d.Out.Endpoint(upstream.S3, ""), HTTPClient: d.Out.HTTPClient()})
	if err != nil {
		return err
	}
	if d.DeleteRate <= 0 {
		d.DeleteRate = receivelink.DefaultDeleteRate
	}
	r := &receivelink.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Blobs: bc,
		Recorder: mgr.GetEventRecorder("receivelink-controller"), Namespace: d.Namespace, DefaultKeys: d.DefaultKeys,
		PublicURL: d.PublicURL, Deletes: rate.NewLimiter(rate.Limit(d.DeleteRate), max(int(d.DeleteRate/5), 1)), Workers: d.Workers,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	sweep := &receivelink.Sweeper{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Cache: mgr.GetCache(), Reconciler: r,
		Namespace: d.Namespace, Interval: d.SweepInterval, MirrorInterval: d.MirrorInterval, Registerer: d.Registerer}
	if err := mgr.Add(sweep); err != nil {
		return fmt.Errorf("add the ReceiveLink sweep: %w", err)
	}
	return nil
}

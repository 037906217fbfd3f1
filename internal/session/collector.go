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

package session

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultCollectInterval is how often the collector looks for expired
// sessions. A read already refuses an expired session; the collector only
// frees what nobody reads again, so it need not be prompt.
const DefaultCollectInterval = 10 * time.Minute

// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;delete

// Collector deletes expired sessions on a timer (seed 003: sess:{sid}
// lived SESSION_TTL_SEC and Redis dropped it; here nothing would). It is a
// manager.Runnable that runs on the leader only.
type Collector struct {
	// Client lists and deletes the session Secrets.
	Client client.Client
	// Namespace holds the sessions (the webhook's --session-namespace).
	Namespace string
	// Clock drives the timer (the wall clock when nil).
	Clock clock.WithTicker
	// Interval between passes (DefaultCollectInterval when zero).
	Interval time.Duration
	// TTL judges a session without a readable expires_at (DefaultTTL when
	// zero).
	TTL time.Duration
}

// NeedLeaderElection: one replica collecting is enough.
func (c *Collector) NeedLeaderElection() bool { return true }

func (c *Collector) clock() clock.WithTicker {
	if c.Clock == nil {
		return clock.RealClock{}
	}
	return c.Clock
}

// Start collects at once, then every Interval, until ctx is done. A failed
// pass is logged and tried again at the next tick.
func (c *Collector) Start(ctx context.Context) error {
	clk := c.clock()
	log := logf.FromContext(ctx).WithName("session-collector")
	ticker := clk.NewTicker(orDefault(c.Interval, DefaultCollectInterval))
	defer ticker.Stop()
	for {
		if n, err := c.Collect(ctx); err != nil {
			log.Error(err, "collecting expired sessions failed", "namespace", c.Namespace)
		} else if n > 0 {
			log.V(1).Info("deleted expired sessions", "namespace", c.Namespace, "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// Collect runs one pass now and returns how many sessions it deleted.
func (c *Collector) Collect(ctx context.Context) (int, error) {
	now := c.clock().Now()
	var list corev1.SecretList
	if err := c.Client.List(ctx, &list, client.InNamespace(c.Namespace), client.MatchingLabels{Label: "true"}); err != nil {
		return 0, fmt.Errorf("list sessions: %w", err)
	}
	n := 0
	for i := range list.Items {
		if !Expired(&list.Items[i], now, orDefault(c.TTL, DefaultTTL)) {
			continue
		}
		if err := deleteSecret(ctx, c.Client, &list.Items[i]); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

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

package oauth

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultStateCollectInterval is how often the collector looks for
// expired states.
const DefaultStateCollectInterval = time.Minute

// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;delete

// Collector deletes, on a timer, the expired Secrets of one kind in one
// namespace: OAuth states (NewStateCollector) and receivers' Discord
// sessions (session.NewCollector), which a person who never comes back
// leaves behind and nothing else would ever delete. It is a
// manager.Runnable that runs on the leader only.
type Collector struct {
	// Client lists and deletes the Secrets.
	Client client.Client
	// Namespace holds them (the webhook's --state-namespace).
	Namespace string
	// Selector picks them out by the label their kind carries.
	Selector client.ListOption
	// Expired judges one at now.
	Expired func(sec *corev1.Secret, now time.Time) bool
	// Name is the logger's ("oauth-state-collector"); What names the
	// Secrets in messages ("OAuth states").
	Name, What string
	// Clock drives the timer (the wall clock when nil).
	Clock clock.WithTicker
	// Interval between passes (DefaultStateCollectInterval when zero).
	Interval time.Duration
}

// NewStateCollector collects the expired OAuth states in namespace (the
// webhook's --state-namespace) every DefaultStateCollectInterval: a
// person who never finishes the consent leaves a state behind.
func NewStateCollector(c client.Client, namespace string) *Collector {
	return &Collector{Client: c, Namespace: namespace, Selector: client.HasLabels{StateLabel}, Expired: expired,
		Name: "oauth-state-collector", What: "OAuth states", Interval: DefaultStateCollectInterval}
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
	interval := c.Interval
	if interval <= 0 {
		interval = DefaultStateCollectInterval
	}
	log := logf.FromContext(ctx).WithName(c.Name)
	ticker := c.clock().NewTicker(interval)
	defer ticker.Stop()
	for {
		if n, err := c.Collect(ctx); err != nil {
			log.Error(err, "collecting expired "+c.What+" failed", "namespace", c.Namespace)
		} else if n > 0 {
			log.V(1).Info("deleted expired "+c.What, "namespace", c.Namespace, "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// Collect runs one pass now and returns how many Secrets it deleted.
func (c *Collector) Collect(ctx context.Context) (int, error) {
	now := c.clock().Now()
	var list corev1.SecretList
	if err := c.Client.List(ctx, &list, client.InNamespace(c.Namespace), c.Selector); err != nil {
		return 0, fmt.Errorf("list %s: %w", c.What, err)
	}
	n := 0
	for i := range list.Items {
		if !c.Expired(&list.Items[i], now) {
			continue
		}
		if err := deleteSecret(ctx, c.Client, &list.Items[i]); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// expired reports whether a state Secret is past its use: its recorded
// expiry passed, or it is older than StateTTL by the API server's clock
// (so a Secret with a missing or forged expiry still goes).
func expired(sec *corev1.Secret, now time.Time) bool {
	if now.Sub(sec.CreationTimestamp.Time) > StateTTL {
		return true
	}
	st := stateFrom(sec)
	return st.Expires.IsZero() || !now.Before(st.Expires)
}

// deleteSecret deletes the Secret that was read (UID precondition), and
// treats "already gone" as done.
func deleteSecret(ctx context.Context, c client.Client, sec *corev1.Secret) error {
	uid := sec.UID
	err := c.Delete(ctx, sec, client.Preconditions{UID: &uid})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete Secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return nil
}

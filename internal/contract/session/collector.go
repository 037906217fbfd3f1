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
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// DefaultCollectInterval is how often the collector looks for expired
// sessions. A read already refuses an expired session; the collector only
// frees what nobody reads again, so it need not be prompt.
const DefaultCollectInterval = 10 * time.Minute

// NewCollector collects the expired sessions in namespace (the webhook's
// --session-namespace) every DefaultCollectInterval, on the leader (seed
// 003: sess:{sid} lived SESSION_TTL_SEC and Redis dropped it; here
// nothing would). A session without a readable expires_at is judged by
// DefaultTTL.
func NewCollector(c client.Client, namespace string) *oauth.Collector {
	return &oauth.Collector{Client: c, Namespace: namespace, Selector: client.MatchingLabels{Label: "true"},
		Expired: func(sec *corev1.Secret, now time.Time) bool { return Expired(sec, now, DefaultTTL) },
		Name:    "session-collector", What: "sessions", Interval: DefaultCollectInterval}
}

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

package main

import (
	"fmt"
	"time"

	"k8s.io/client-go/tools/leaderelection"
)

// Leader election defaults: controller-runtime's, so a manager that sets no
// flag behaves as before. With them the leader survives an API server
// outage of up to 10 s (the renew deadline), and a standby takes over at
// most 15 s (the lease duration) after a leader vanished.
const (
	// defaultLeaderElectionID is the Lease of the main manager; a shard
	// names its own.
	defaultLeaderElectionID = "manager.switchboard.dev"
	defaultLeaseDuration    = 15 * time.Second
	defaultRenewDeadline    = 10 * time.Second
	defaultRetryPeriod      = 2 * time.Second
)

// validateLeaderElection applies client-go's rules for the three timings
// (leaderelection.NewLeaderElector) at start-up, naming the flags, instead
// of failing later with a message about fields a person never set.
func validateLeaderElection(lease, renew, retry time.Duration) error {
	switch {
	case lease <= 0 || renew <= 0 || retry <= 0:
		return fmt.Errorf("--leader-election-lease-duration (%s), --leader-election-renew-deadline (%s) and --leader-election-retry-period (%s) must all be positive",
			lease, renew, retry)
	case renew >= lease:
		return fmt.Errorf("--leader-election-renew-deadline (%s) must be shorter than --leader-election-lease-duration (%s): "+
			"a standby may take a lease as old as the lease duration while its leader still thinks it holds it", renew, lease)
	case float64(renew) <= leaderelection.JitterFactor*float64(retry):
		return fmt.Errorf("--leader-election-renew-deadline (%s) must be longer than %.1f × --leader-election-retry-period (%s): "+
			"the leader needs time for more than one renewal attempt", renew, leaderelection.JitterFactor, retry)
	}
	return nil
}

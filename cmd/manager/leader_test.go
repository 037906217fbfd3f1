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
	"strings"
	"testing"
	"time"
)

func TestLeaderElectionTimings(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name               string
		lease, renew, retr time.Duration
		wantFlag           string // in the error; "" for valid
	}{
		{"the defaults are valid", defaultLeaseDuration, defaultRenewDeadline, defaultRetryPeriod, ""},
		{"a long outage budget is valid", 60 * s, 45 * s, 5 * s, ""},
		{"a renew deadline as long as the lease is refused", 15 * s, 15 * s, 2 * s, "--leader-election-renew-deadline (15s) must be shorter than --leader-election-lease-duration (15s)"},
		{"a renew deadline past the lease is refused", 15 * s, 20 * s, 2 * s, "must be shorter than --leader-election-lease-duration"},
		{"a retry period close to the renew deadline is refused", 15 * s, 10 * s, 9 * s, "must be longer than 1.2 × --leader-election-retry-period (9s)"},
		{"a zero retry period is refused", 15 * s, 10 * s, 0, "must all be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateLeaderElection(tc.lease, tc.renew, tc.retr)
			switch {
			case tc.wantFlag == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantFlag != "" && (err == nil || !strings.Contains(err.Error(), tc.wantFlag)):
				t.Fatalf("err = %v, want one saying %q", err, tc.wantFlag)
			}
		})
	}
}

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

package clocks_test

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/switchboard-dev/switchboard/internal/clocks"
)

func TestNowIsTheGivenClocksOrTheRealOne(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := clocks.Now(clocktesting.NewFakePassiveClock(at)); !got.Equal(at) {
		t.Errorf("fake clock: %v, want %v", got, at)
	}
	before := time.Now()
	got := clocks.Now(nil)
	if got.Before(before) || got.After(time.Now()) {
		t.Errorf("nil clock: %v is not the real time", got)
	}
}

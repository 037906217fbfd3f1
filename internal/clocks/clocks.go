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

// Package clocks is the one default for the injectable clocks of the
// operator's structs: a nil clock is the real one.
package clocks

import (
	"time"

	"k8s.io/utils/clock"
)

// Now is c's time, or the real time when c is nil.
func Now(c clock.PassiveClock) time.Time {
	if c == nil {
		return time.Now()
	}
	return c.Now()
}

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

package calendarwatch

import (
	"time"

	"github.com/switchboard-dev/switchboard/internal/outbound"
)

// The schedules of seed 002, each ±10 % (outbound.DefaultJitter) and never
// sooner than a Retry-After Google sent.
var (
	// Retries spaces the Calendar calls that failed transiently (network
	// errors, 5xx, rate limits): 1, 2, 4, 8 and 16 seconds, then the
	// backup sync timer (seed 002 "Retry Logic", "Sync Errors"). The
	// runner's Transient schedule and the HTTP sink's deliveries use it.
	Retries = outbound.Schedule{Base: time.Second, Retries: 5, Max: outbound.MaxRetryAfter}
	// ChannelRetries spaces attempts to open a push channel that failed:
	// 1 s doubling to an hour. The backup sync goes on meanwhile (seed 002
	// "Graceful Degradation"), so nothing is lost while a refused address
	// waits for a person to fix it.
	ChannelRetries = outbound.Schedule{Base: time.Second, Max: time.Hour}
)

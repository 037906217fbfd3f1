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

package runner

import (
	"time"
)

type kind int

const (
	kindContinue kind = iota
	kindDone
	kindWait
	kindRetry
	kindTransient
	kindStall
)

// Outcome is what a phase decided. The zero value is Continue.
type Outcome struct {
	kind    kind
	after   time.Duration
	reason  string
	err     error
	recheck time.Duration
}

// Continue goes on to the next phase.
func Continue() Outcome { return Outcome{} }

// Done ends the reconcile with nothing left to do and no timer: the object
// is Ready or settled, and a watch brings it back when something changes.
func Done() Outcome { return Outcome{kind: kindDone} }

// Wait ends the reconcile and looks again after d (jittered): a timer, a
// batch in flight, an integration that is not Ready yet. The phase has set
// the status it wants shown.
func Wait(d time.Duration) Outcome { return Outcome{kind: kindWait, after: d} }

// Retry ends the reconcile after a transient failure and looks again after
// d, which the phase computed from a schedule and the attempts it counts in
// status (SlideStock, PaperSync). Ready=False and Reconciling=True carry
// the reason; the failure is logged once.
func Retry(reason string, err error, d time.Duration) Outcome {
	return Outcome{kind: kindRetry, reason: reason, err: err, after: d}
}

// Transient ends the reconcile after a failure that will pass by itself
// (an upstream 5xx, a timeout, an API-server error): the runner requeues
// it on the controller's schedule (the attempts counted in memory, reset by
// success), never sooner than a Retry-After that err carries. No worker
// waits; the failure is logged once.
func Transient(reason string, err error) Outcome {
	return Outcome{kind: kindTransient, reason: reason, err: err}
}

// Stall ends the reconcile on a failure only a person can fix (an invalid
// spec, a missing Secret, a revoked grant): Ready=False and Stalled=True
// with the reason, logged once, and no requeue — a spec change, a
// requested-at annotation or a watched object brings it back.
func Stall(reason string, err error) Outcome {
	return Outcome{kind: kindStall, reason: reason, err: err}
}

// RecheckAfter makes a Stall look again after d: for what the manager does
// not watch (Secrets a person creates are not cached).
func (o Outcome) RecheckAfter(d time.Duration) Outcome {
	o.recheck = d
	return o
}

// Failed reports whether the outcome is a failure (Retry, Transient,
// Stall).
func (o Outcome) Failed() bool { return o.kind >= kindRetry }

// IsContinue reports whether the outcome goes on to the next phase.
func (o Outcome) IsContinue() bool { return o.kind == kindContinue }

// IsDone reports whether the outcome is Done: the object needs nothing
// more.
func (o Outcome) IsDone() bool { return o.kind == kindDone }

// IsWait reports whether the outcome is a Wait.
func (o Outcome) IsWait() bool { return o.kind == kindWait }

// IsRetry reports whether the outcome is a Retry.
func (o Outcome) IsRetry() bool { return o.kind == kindRetry }

// IsTransient reports whether the outcome is a Transient failure.
func (o Outcome) IsTransient() bool { return o.kind == kindTransient }

// IsStall reports whether the outcome is a Stall.
func (o Outcome) IsStall() bool { return o.kind == kindStall }

// Err is the failure, if any.
func (o Outcome) Err() error { return o.err }

// Reason is the failure's condition reason, if any.
func (o Outcome) Reason() string { return o.reason }

// String names the outcome for logs and test failures: continue, done,
// wait, retry, transient or stall, with the reason of a failure. Code
// tests an outcome with its predicates (IsContinue, IsStall, …), never by
// this text.
func (o Outcome) String() string {
	name := [...]string{"continue", "done", "wait", "retry", "transient", "stall"}[o.kind]
	if o.reason != "" {
		name += " (" + o.reason + ")"
	}
	return name
}

// After is the wait a Wait or Retry asked for, or a Stall's recheck.
func (o Outcome) After() time.Duration {
	if o.kind == kindStall {
		return o.recheck
	}
	return o.after
}

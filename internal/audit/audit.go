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

// Package audit is the record that outlives Kubernetes Events: the API
// server deletes Events after its --event-ttl (one hour by default), and
// seed 002's activity log and seed 003's trail of share links must be
// kept. Each fact is one structured line on the binary's log stream, under
// the fixed logger name LoggerName so that a cluster's log pipeline can
// keep exactly these lines, and one increment of
// switchboard_audit_facts_total{fact}. The fields of each fact are fixed
// (schema.go, docs/audit.md); none can hold a token, a code, a session id
// or a URL that carries one.
//
// Each binary calls Setup once at start-up; code that sees a fact happen
// calls Record once, after it happened.
package audit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
)

// LoggerName is the name of the audit logger under each binary's base
// logger: the zap JSON lines read {"logger":"audit",...}.
const LoggerName = "audit"

// MetricName counts the facts recorded, labelled fact.
const MetricName = "switchboard_audit_facts_total"

// Fact is one thing that happened, as it is recorded: what (Fact), about
// which object (Kind, Namespace, Name), and the fields of that fact
// (schema: only those are written, each of them always, "" when unknown).
// Every field is an identifier or a time a person may read; none is meant
// to hold a secret, and no caller puts one in.
type Fact struct {
	Fact                  FactName
	Kind, Namespace, Name string

	// calendar.appointment_deleted
	Source, EventID, Reason                                 string
	DeletedAPIVersion, DeletedKind, DeletedName, DeletedUID string
	// link.issued, link.resolved, link.downloaded, link.expired
	Owner, Receiver, ReceiverDiscordUserID, Blob, ShareSecret string
	ExpiresAt                                                 time.Time
	DiscordUserID, SourceAddress, Outcome                     string
	// oauth.connected, oauth.refreshed, oauth.revoked
	Target, Provider, SignUp, TokenSecret, Action string
	// sheets.session_appended
	Connection string
	Row        int
}

// state is where facts go; replaced whole (Setup, Tap), read without a
// lock.
type state struct {
	log   logr.Logger
	facts *prometheus.CounterVec
	taps  map[int]logr.Logger
}

var (
	mu      sync.Mutex // serialises replacing current
	current atomic.Pointer[state]
	nextTap int
)

func init() {
	current.Store(&state{log: logr.Discard()})
}

// Setup makes base.WithName(LoggerName) the audit logger and registers
// the counter in reg (controller-runtime's registry in the manager, the
// webhook's own registry in the webhook), every fact's series at zero.
// Each binary calls it once, at start-up; a second call replaces the
// first (tests).
func Setup(base logr.Logger, reg prometheus.Registerer) error {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricName,
		Help: "Audit facts recorded on the log stream (logger \"audit\"), by fact. See docs/audit.md.",
	}, []string{"fact"})
	for _, f := range Facts() {
		c.WithLabelValues(string(f))
	}
	if reg != nil {
		if err := reg.Register(c); err != nil {
			var dup prometheus.AlreadyRegisteredError
			if !errors.As(err, &dup) {
				return err
			}
			existing, ok := dup.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return err
			}
			c = existing
		}
	}
	replace(func(s *state) { s.log, s.facts = base.WithName(LoggerName), c })
	return nil
}

// Tap sends every fact also to base.WithName(LoggerName) until stop is
// called: tests capture the record with it (audittest.Capture), each its
// own, whatever Setup installed.
func Tap(base logr.Logger) (stop func()) {
	var id int
	replace(func(s *state) {
		nextTap++
		id = nextTap
		s.taps[id] = base.WithName(LoggerName)
	})
	return func() { replace(func(s *state) { delete(s.taps, id) }) }
}

// replace swaps current for a copy that change edited.
func replace(change func(*state)) {
	mu.Lock()
	defer mu.Unlock()
	old := current.Load()
	s := &state{log: old.log, facts: old.facts, taps: make(map[int]logr.Logger, len(old.taps)+1)}
	for k, v := range old.taps {
		s.taps[k] = v
	}
	change(s)
	current.Store(s)
}

// errUnknownFact: a FactName that is none of the constants.
var errUnknownFact = errors.New("not an audit fact: not recorded")

// Record writes f as one line on the audit logger and counts it. Call it
// once per fact, after the fact happened (the object deleted, the Secret
// written, the answer sent).
func Record(_ context.Context, f Fact) {
	s := current.Load()
	fields, ok := schema[f.Fact]
	if !ok {
		s.log.Error(errUnknownFact, "unknown audit fact", "fact", string(f.Fact))
		return
	}
	kv := make([]any, 0, 2*(4+len(fields)))
	kv = append(kv, "fact", string(f.Fact), "kind", f.Kind, "namespace", f.Namespace, "name", f.Name)
	for _, fd := range fields {
		kv = append(kv, fd.key, fd.value(&f))
	}
	s.log.Info(string(f.Fact), kv...)
	for _, t := range s.taps {
		t.Info(string(f.Fact), kv...)
	}
	if s.facts != nil {
		s.facts.WithLabelValues(string(f.Fact)).Inc()
	}
}

// subjectKey carries the object a fact is about through a context.
type subjectKey struct{}

// Subject is the object a fact is about.
type Subject struct{ Kind, Namespace, Name string }

// WithSubject returns ctx naming s, for code that records a fact on
// behalf of its caller: the OAuth engine refreshing a resource's grant
// names the resource its grant phase put here.
func WithSubject(ctx context.Context, s Subject) context.Context {
	return context.WithValue(ctx, subjectKey{}, s)
}

// SubjectFrom is the subject WithSubject put in ctx, if any.
func SubjectFrom(ctx context.Context) (Subject, bool) {
	s, ok := ctx.Value(subjectKey{}).(Subject)
	return s, ok
}

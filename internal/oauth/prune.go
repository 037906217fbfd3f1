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
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A resource's states: listed by StateResourceLabel, bounded after each
// start (MaxStatesPerResource, MaxBrowsersPerResource), dropped after a
// successful callback.

// createdAt orders states finer than creationTimestamp's whole seconds.
func createdAt(sec *corev1.Secret) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, sec.Annotations[stateCreatedAnnotation]); err == nil {
		return t
	}
	return sec.CreationTimestamp.Time
}

// newestFirst sorts states newest first (ties by name, so every replica
// orders them alike).
func newestFirst(list []corev1.Secret) {
	sort.Slice(list, func(i, j int) bool {
		ti, tj := createdAt(&list[i]), createdAt(&list[j])
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return list[i].Name > list[j].Name
	})
}

// prune keeps the newest MaxStatesPerResource states of a resource.
func (s *States) prune(ctx context.Context, namespace, name string) error {
	list, err := s.listFor(ctx, resourceHash(namespace, name))
	if err != nil || len(list) <= MaxStatesPerResource {
		return err
	}
	newestFirst(list)
	for i := MaxStatesPerResource; i < len(list); i++ {
		if err := deleteSecret(ctx, s.Writer, &list[i]); err != nil {
			return err
		}
	}
	return nil
}

// pruneBrowser bounds the states of a resource that anyone may start,
// without ever deleting another browser's live state:
//
//   - a browser keeps its newest MaxStatesPerResource states (a fourth
//     tab replaces its own oldest, as before);
//   - at most MaxBrowsers browsers have states at once, the
//     first to start keeping their slot. The state just made for a browser
//     beyond them is deleted again and the start refused with a
//     *TooManyStartsError (the bound is checked after the create, so two
//     starts racing for the last slot cannot both keep one).
//
// Expired states count for nothing; those seen go at once.
func (s *States) pruneBrowser(ctx context.Context, st State, mine *corev1.Secret, now time.Time) error {
	list, err := s.listFor(ctx, st.resource())
	if err != nil {
		return err
	}
	newestFirst(list)
	order, err := s.liveBrowsers(ctx, list, st, mine, now)
	if err != nil {
		return err
	}
	for i, b := range order {
		if b.digest != st.BrowserDigest || i < s.maxBrowsers() {
			continue
		}
		if err := deleteSecret(ctx, s.Writer, mine); err != nil {
			return err
		}
		// A slot frees up when the first of the browsers holding one has
		// no live state left.
		wait := StateTTL
		for _, held := range order[:s.maxBrowsers()] {
			wait = min(wait, held.lastExpires.Sub(now))
		}
		return &TooManyStartsError{RetryAfter: max(wait, time.Second)}
	}
	return nil
}

// browser is one browser's live states of a resource: first is its
// oldest live state's creation, lastExpires its newest's expiry.
type browser struct {
	digest      string
	first       time.Time
	lastExpires time.Time
	states      int
}

// liveBrowsers walks a resource's states, newest first, and returns the
// browsers holding live ones in the order they first held one. On the
// way it deletes the expired states (but mine, the one just made) and
// st's browser's states beyond its newest MaxStatesPerResource.
func (s *States) liveBrowsers(ctx context.Context, list []corev1.Secret, st State, mine *corev1.Secret, now time.Time) ([]*browser, error) {
	seen := map[string]*browser{}
	for i := range list {
		sec := &list[i]
		// By the recorded expiry alone, on this clock: the collector also
		// reads the API server's creation time, on the wall clock.
		if exp := stateFrom(sec).Expires; sec.UID != mine.UID && (exp.IsZero() || !now.Before(exp)) {
			if err := deleteSecret(ctx, s.Writer, sec); err != nil {
				return nil, err
			}
			continue
		}
		d := sec.Labels[StateBrowserLabel]
		b := seen[d]
		if b == nil {
			b = &browser{digest: d, lastExpires: stateFrom(sec).Expires}
			seen[d] = b
		}
		b.states++
		if d == st.BrowserDigest && b.states > MaxStatesPerResource {
			if err := deleteSecret(ctx, s.Writer, sec); err != nil {
				return nil, err
			}
			continue
		}
		b.first = createdAt(sec)
	}
	order := make([]*browser, 0, len(seen))
	for _, b := range seen {
		order = append(order, b)
	}
	sort.Slice(order, func(i, j int) bool {
		if !order[i].first.Equal(order[j].first) {
			return order[i].first.Before(order[j].first)
		}
		return order[i].digest < order[j].digest
	})
	return order, nil
}

func (s *States) listFor(ctx context.Context, resource string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := s.Reader.List(ctx, &list, client.InNamespace(s.Namespace),
		client.MatchingLabels{StateResourceLabel: resource}); err != nil {
		return nil, fmt.Errorf("list OAuth states: %w", err)
	}
	return list.Items, nil
}

// DeleteFor deletes every outstanding state of a resource: after a
// successful callback, no flow started with the old token may finish.
func (s *States) DeleteFor(ctx context.Context, namespace, name string) error {
	list, err := s.listFor(ctx, resourceHash(namespace, name))
	if err != nil {
		return err
	}
	for i := range list {
		if err := deleteSecret(ctx, s.Writer, &list[i]); err != nil {
			return err
		}
	}
	return nil
}

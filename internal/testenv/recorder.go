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

package testenv

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Recorder is an events.EventRecorder that keeps every Event's text as
// "TYPE REASON note[ related=Kind/name]", for tests that assert what a
// person would read in `kubectl describe`.
type Recorder struct {
	events.FakeRecorder
	mu   sync.Mutex
	seen []string
}

// Eventf records one Event.
func (r *Recorder) Eventf(_, related runtime.Object, typ, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rel := ""
	if ref, ok := related.(*corev1.ObjectReference); ok && ref != nil {
		rel = " related=" + ref.Kind + "/" + ref.Name
	}
	r.seen = append(r.seen, typ+" "+reason+" "+fmt.Sprintf(note, args...)+rel)
}

// With returns the Events recorded with reason.
func (r *Recorder) With(reason string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.seen {
		if strings.Contains(e, " "+reason+" ") {
			out = append(out, e)
		}
	}
	return out
}

// All returns every Event recorded.
func (r *Recorder) All() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// Reset forgets the Events recorded so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = nil
}

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

// Package poll is the one way hack/'s programs wait for a condition: the
// walk every kind takes (hack/internal/scenario), the demo, the e2e's node,
// release and operations, and the benchmarks.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Until calls f every `every` until it answers true, and then returns nil.
// An error f answers with false says why it is not done yet: Until calls f
// again, and when timeout passes returns a *Timeout that names the last
// such error. An error marked with Stop ends the wait at once, and so does
// the end of ctx; Until returns that error. Every error Until returns
// starts with "what: " when what is not empty.
func Until(ctx context.Context, what string, every, timeout time.Duration, f func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := f()
		if ok {
			return nil
		}
		if Stopped(err) {
			return named(what, err)
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			return named(what, &Timeout{After: timeout, Last: last})
		}
		select {
		case <-ctx.Done():
			return named(what, ctx.Err())
		case <-time.After(every):
		}
	}
}

func named(what string, err error) error {
	if what == "" {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Timeout is Until's error when the time it had passed first: After is
// that time, Last the last error the condition gave (nil if none).
type Timeout struct {
	After time.Duration
	Last  error
}

func (t *Timeout) Error() string {
	if t.Last == nil {
		return fmt.Sprintf("timed out after %s", t.After)
	}
	return fmt.Sprintf("timed out after %s: %v", t.After, t.Last)
}

func (t *Timeout) Unwrap() error { return t.Last }

// Stop marks err as one that waiting cannot mend: Until returns it at
// once. Stop(nil) is nil. The marked error reads, and unwraps, as err.
func Stop(err error) error {
	if err == nil {
		return nil
	}
	return &stopped{err}
}

// Stopped reports whether err, or an error it wraps, was marked by Stop.
func Stopped(err error) bool {
	var s *stopped
	return errors.As(err, &s)
}

type stopped struct{ err error }

func (s *stopped) Error() string { return s.err.Error() }
func (s *stopped) Unwrap() error { return s.err }

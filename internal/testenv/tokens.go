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
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// FakeTokens is a struct-of-functions fake of the OAuth engine
// (oauth.TokenSource), for tests of phase logic: the engine has its own
// tests. Without Answer every call gets a grant that works, access token
// "access".
type FakeTokens struct {
	// Answer, when set, answers each call; force is Ensure's.
	Answer func(force bool) (oauth.Token, error)
	// Now, when set (and Answer is not), gives the working grant an
	// expiry an hour after it.
	Now func() time.Time

	calls atomic.Int32
}

var _ oauth.TokenSource = (*FakeTokens)(nil)

// Ensure implements oauth.TokenSource.
func (f *FakeTokens) Ensure(_ context.Context, _ oauth.Provider, _, _ types.NamespacedName, _ time.Duration, force bool) (oauth.Token, error) {
	f.calls.Add(1)
	if f.Answer != nil {
		return f.Answer(force)
	}
	tok := oauth.Token{AccessToken: "access"}
	if f.Now != nil {
		tok.Expiry = f.Now().Add(time.Hour)
	}
	return tok, nil
}

// Calls is how many times Ensure was called.
func (f *FakeTokens) Calls() int { return int(f.calls.Load()) }

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

package wire_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/index"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
	"github.com/switchboard-dev/switchboard/internal/resmetrics"
)

// tokenMetrics are the series every OAuth kind has (docs/metrics.md).
var tokenMetrics = []string{
	"switchboard_oauth_token_expiration_timestamp_seconds",
	"switchboard_oauth_token_last_refresh_timestamp_seconds",
	"switchboard_oauth_token_refresh_failures",
}

// errRead ends a target's Resolve once it has said what it reads.
var errRead = errors.New("read")

// typeReader records the type of the object a Get reads into.
type typeReader struct {
	client.Reader
	read reflect.Type
}

func (r *typeReader) Get(_ context.Context, _ types.NamespacedName, obj client.Object, _ ...client.GetOption) error {
	r.read = reflect.TypeOf(obj)
	return errRead
}

// resolves is the type of the object t's Resolve reads.
func resolves(t *testing.T, name string, resolve func(context.Context, client.Reader, types.NamespacedName) error) reflect.Type {
	t.Helper()
	r := &typeReader{}
	if err := resolve(context.Background(), r, types.NamespacedName{Namespace: "ns", Name: "x"}); !errors.Is(err, errRead) {
		t.Fatalf("target %s: Resolve answered %v, want the reader's error", name, err)
	}
	return r.read
}

// missing is what an OAuth kind named kind, of obj's type, lacks of what
// every OAuth kind has: a target of the OAuth routes that reads objects
// of its type, the OAuthSecrets index entry that wakes it on a new grant,
// and its token series.
func missing(t *testing.T, kind string, obj client.Object) []string {
	t.Helper()
	var lacks []string
	found := 0
	for _, tg := range targets.All() {
		read := resolves(t, tg.Name, func(ctx context.Context, r client.Reader, key types.NamespacedName) error {
			_, err := tg.Resolve(ctx, r, key)
			return err
		})
		if read == reflect.TypeOf(obj) {
			found++
			if tg.Kind != strings.ToLower(kind) {
				lacks = append(lacks, "a target whose Kind is "+strings.ToLower(kind)+" (target "+tg.Name+" says "+tg.Kind+")")
			}
		}
	}
	if found != 1 {
		lacks = append(lacks, "one OAuth target in internal/oauth/targets")
	}
	if !slices.Contains(index.Kinds(index.OAuthSecrets), kind) {
		lacks = append(lacks, "the "+index.OAuthSecrets+" index entry")
	}
	for _, m := range tokenMetrics {
		if !slices.Contains(resmetrics.Kinds(m), kind) {
			lacks = append(lacks, "the "+m+" series")
		}
	}
	return lacks
}

// Every kind of the API that implements v1alpha1.OAuthObject has an OAuth
// target, the index entry that wakes it on a new grant and its token
// series; and every target and index entry is of such a kind.
func TestEveryOAuthKindHasATargetAnIndexEntryAndTokenMetrics(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var oauthKinds []string
	for _, kind := range v1alpha1.Kinds() {
		obj, err := s.New(v1alpha1.GroupVersion.WithKind(kind))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := obj.(v1alpha1.OAuthObject); !ok {
			continue
		}
		oauthKinds = append(oauthKinds, kind)
		for _, lack := range missing(t, kind, obj.(client.Object)) {
			t.Errorf("%s implements OAuthObject but lacks %s", kind, lack)
		}
	}
	if len(oauthKinds) == 0 {
		t.Fatal("no kind implements OAuthObject: this test checks nothing")
	}
	if got := index.Kinds(index.OAuthSecrets); !slices.Equal(got, oauthKinds) {
		t.Errorf("%s is on %v, want the OAuth kinds %v", index.OAuthSecrets, got, oauthKinds)
	}
	if got := len(targets.All()); got != len(oauthKinds) {
		t.Errorf("%d OAuth targets, want one for each of %v", got, oauthKinds)
	}
}

// notAKind is a throwaway OAuth kind (named so that no real kind is), as a new kind is before anything
// names it: the check above must find what it lacks.
type notAKind struct{ v1alpha1.CalendarWatch }

func TestTheCheckFindsWhatANewOAuthKindLacks(t *testing.T) {
	got := missing(t, "NotAKind", &notAKind{})
	want := append([]string{"one OAuth target in internal/oauth/targets", "the " + index.OAuthSecrets + " index entry"},
		"the switchboard_oauth_token_expiration_timestamp_seconds series",
		"the switchboard_oauth_token_last_refresh_timestamp_seconds series",
		"the switchboard_oauth_token_refresh_failures series")
	if !slices.Equal(got, want) {
		t.Errorf("a new OAuth kind with nothing of its own lacks %q, want %q", got, want)
	}
}

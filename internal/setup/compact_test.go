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

package setup

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// decoded gives a fresh copy of obj as the informer has it: decoded from
// the API server's JSON, each string its own allocation.
func decoded[T any](t *testing.T, obj *T) *T {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func watch(i int) *v1alpha1.CalendarWatch {
	w := &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("cw-%d", i), Namespace: "team-a", Finalizers: []string{v1alpha1.Finalizer},
		Labels:        map[string]string{"app.kubernetes.io/part-of": fmt.Sprintf("app-%d", i)},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}},
	}}
	msg := fmt.Sprintf("google grant in Secret team-a/token-%d has no refresh token", i)
	w.Status.Conditions = []metav1.Condition{
		{Type: "Authenticated", Status: metav1.ConditionFalse, Reason: "ReauthRequired", Message: msg},
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "ReauthRequired", Message: msg},
		{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "ReauthRequired", Message: msg},
	}
	return w
}

func TestCompactSharesTheStringsObjectsHoldAlikeAndChangesNothingTheySay(t *testing.T) {
	compact := Compact()
	var kept []*v1alpha1.CalendarWatch
	for i := range 2 {
		in := decoded(t, watch(i))
		want := in.DeepCopy()
		want.ManagedFields = nil
		out, err := compact(in)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*v1alpha1.CalendarWatch)
		if !equality.Semantic.DeepEqual(got, want) {
			t.Fatalf("compact changed the object:\n got %+v\nwant %+v", got, want)
		}
		kept = append(kept, got)
	}
	a, b := kept[0], kept[1]
	for _, pair := range []struct {
		what string
		x, y string
	}{
		{"namespace", a.Namespace, b.Namespace},
		{"finalizer", a.Finalizers[0], b.Finalizers[0]},
		{"condition type", a.Status.Conditions[2].Type, b.Status.Conditions[2].Type},
		{"condition status", string(a.Status.Conditions[0].Status), string(b.Status.Conditions[1].Status)},
		{"condition reason", a.Status.Conditions[0].Reason, b.Status.Conditions[2].Reason},
	} {
		if !same(pair.x, pair.y) {
			t.Errorf("the two objects' %s %q is held twice", pair.what, pair.x)
		}
	}
	for k := range a.Labels {
		for k2 := range b.Labels {
			if !same(k, k2) {
				t.Errorf("the label key %q is held twice", k)
			}
		}
	}
	if c := a.Status.Conditions; cap(c) != len(c) {
		t.Errorf("%d conditions are held in room for %d", len(c), cap(c))
	}
	// A message names the object: shared among its own conditions only.
	if c := a.Status.Conditions; !same(c[0].Message, c[1].Message) || !same(c[0].Message, c[2].Message) {
		t.Errorf("one object's three equal messages are held apart")
	}
	if a.Labels["app.kubernetes.io/part-of"] == b.Labels["app.kubernetes.io/part-of"] {
		t.Fatalf("the fixture's label values should differ")
	}
}

func TestCompactKeepsASecretsDataAndSharesItsKeys(t *testing.T) {
	compact := Compact()
	var kept []*corev1.Secret
	for i := range 2 {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("link-%d", i), Namespace: "switchboard-system",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "ReceiveLink", Name: fmt.Sprintf("rl-%d", i)}}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"url": []byte(fmt.Sprintf("https://example.com/%d", i))},
		}
		in := decoded(t, s)
		out, err := compact(in)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Secret)
		if !equality.Semantic.DeepEqual(got, s) {
			t.Fatalf("compact changed the Secret:\n got %+v\nwant %+v", got, s)
		}
		kept = append(kept, got)
	}
	a, b := kept[0], kept[1]
	if !same(string(a.Type), string(b.Type)) || !same(a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind) ||
		!same(a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion) {
		t.Errorf("the Secrets' type or owner's kind is held twice")
	}
	for k := range a.Data {
		for k2 := range b.Data {
			if !same(k, k2) {
				t.Errorf("the data key %q is held twice", k)
			}
		}
	}
}

func TestTheInternPoolIsBounded(t *testing.T) {
	p := &internPool{}
	for i := range maxInterned + 100 {
		p.intern(fmt.Sprintf("reason-%d", i))
	}
	if n := p.strings.n.Load(); n != maxInterned {
		t.Fatalf("the pool holds %d strings, want at most %d", n, maxInterned)
	}
	late := fmt.Sprintf("reason-%d", maxInterned+1)
	if got := p.intern(late); got != late {
		t.Fatalf("a string past the bound came back as %q", got)
	}
	long := string(make([]byte, maxInternedLen+1))
	if _, ok := p.strings.m.Load(long); ok || !same(p.intern(long), long) {
		t.Fatalf("a string longer than %d bytes was interned", maxInternedLen)
	}
	first := "reason-0"
	if !same(p.intern(string([]byte(first))), p.intern(string([]byte(first)))) {
		t.Fatalf("an interned string is not given back as its one copy")
	}
}

func TestOnlyTheWebhooksCacheDropsConditionMessages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scope    Scope
		messages bool
	}{
		{"the manager's", Scope{SecretsOnlyWake: true}, true},
		{"the webhook's", Scope{SecretsOnlyInOwn: true, ConditionStatusOnly: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.scope.CacheOptions(Scheme()).DefaultTransform(decoded(t, watch(1)))
			if err != nil {
				t.Fatal(err)
			}
			w := out.(*v1alpha1.CalendarWatch)
			for _, c := range w.Status.Conditions {
				if c.Type == "" || c.Status == "" || c.Reason == "" || (c.Message != "") != tc.messages {
					t.Fatalf("condition %+v: want type, status and reason, and a message: %v", c, tc.messages)
				}
			}
			if w.ManagedFields != nil || w.Namespace != "team-a" {
				t.Fatalf("the rest of the transform did not run: %+v", w.ObjectMeta)
			}
		})
	}
}

func TestCompactSharesOneLabelMapAmongSecretsLabelledAlike(t *testing.T) {
	compact := Compact()
	secret := func(name string, labels map[string]string) *corev1.Secret {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", Labels: labels}}
		out, err := compact(decoded(t, s))
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Secret)
		if !equality.Semantic.DeepEqual(got, s) {
			t.Fatalf("compact changed the Secret:\n got %+v\nwant %+v", got, s)
		}
		return got
	}
	connect := func() map[string]string {
		return map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, oauth.ConnectTargetLabel: "notion"}
	}
	a, b := secret("a-connect", connect()), secret("b-connect", connect())
	if !sameMap(a.Labels, b.Labels) {
		t.Errorf("two connect Secrets labelled alike hold a label map each")
	}
	other := connect()
	other[oauth.ConnectTargetLabel] = "google-sheets"
	if c := secret("c-connect", other); sameMap(a.Labels, c.Labels) {
		t.Errorf("Secrets labelled differently share a label map: %v", c.Labels)
	}
	// A label whose value names an object is not one of the shared keys.
	tokens := func(uid string) map[string]string {
		return map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, linktoken.TokenLabel: "true", linktoken.LinkUIDLabel: uid}
	}
	if x, y := secret("x", tokens("u-1")), secret("y", tokens("u-1")); sameMap(x.Labels, y.Labels) {
		t.Errorf("label maps with a link's UID are shared")
	}
	// What the cache hands out is a deep copy: writing it leaves the
	// shared map alone.
	cp := a.DeepCopy()
	cp.Labels["changed"] = "yes"
	if _, ok := b.Labels["changed"]; ok || sameMap(cp.Labels, b.Labels) {
		t.Fatalf("a deep copy's label map is the shared one")
	}
}

func TestTheSharedLabelSetsAreBounded(t *testing.T) {
	p := &internPool{}
	for i := range maxSharedLabelSets + 10 {
		p.labels(map[string]string{v1alpha1.ShardLabel: fmt.Sprintf("shard-%d", i)})
	}
	if n := p.labelSets.n.Load(); n != maxSharedLabelSets {
		t.Fatalf("the pool holds %d label sets, want at most %d", n, maxSharedLabelSets)
	}
	late := map[string]string{v1alpha1.ShardLabel: fmt.Sprintf("shard-%d", maxSharedLabelSets+1)}
	if sameMap(p.labels(late), p.labels(late)) {
		t.Fatalf("a label set past the bound is shared")
	}
	if first := map[string]string{v1alpha1.ShardLabel: "shard-0"}; !sameMap(p.labels(first), p.labels(first)) {
		t.Fatalf("a label set within the bound is not shared")
	}
}

// sameMap is whether a and b are one map.
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

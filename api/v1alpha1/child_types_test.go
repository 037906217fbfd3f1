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

package v1alpha1_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// Statuses as the previous release stored them: the child status they now
// share must read them the same, and write them back field for field.
const (
	storedPaperSyncStatus = `{"phase":"Failed","link":"https://arxiv.org/abs/2301.12345","arxivID":"2301.12345",` +
		`"handedTo":"ps-abc","skipped":"no link","title":"A paper","publicationYear":2023,"attempts":4,` +
		`"lastError":"arXiv: 503","completedAt":"2026-11-22T12:00:00Z","observedGeneration":1}`
	storedSheetSyncStatus = `{"phase":"Pending","rowNumber":7,"updatedRange":"Sheet1!A7:I7","attempts":3,` +
		`"lastError":"append: 429","attemptedAt":"2026-11-22T12:00:00Z","inFlightSince":"2026-11-22T12:00:00Z",` +
		`"nextAttemptAt":"2026-11-22T12:00:04Z","trace":{"request":"{}","response":"{}"},"completedAt":"2026-11-22T12:01:00Z"}`
)

func TestChildrenReadAndWriteTheStatusThePreviousReleaseStored(t *testing.T) {
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		stored string
		obj    v1alpha1.ChildObject
		want   v1alpha1.ChildStatus
	}{
		{storedPaperSyncStatus, &v1alpha1.PaperSync{}, v1alpha1.ChildStatus{Phase: v1alpha1.SyncFailed, Attempts: 4, LastError: "arXiv: 503"}},
		{storedSheetSyncStatus, &v1alpha1.SheetSync{}, v1alpha1.ChildStatus{Phase: v1alpha1.SyncPending, Attempts: 3, LastError: "append: 429"}},
	} {
		var st any
		switch o := tc.obj.(type) {
		case *v1alpha1.PaperSync:
			st = &o.Status
		case *v1alpha1.SheetSync:
			st = &o.Status
		}
		if err := json.Unmarshal([]byte(tc.stored), st); err != nil {
			t.Fatal(err)
		}
		got := *tc.obj.GetChildStatus()
		if got.Phase != tc.want.Phase || got.Attempts != tc.want.Attempts || got.LastError != tc.want.LastError || got.CompletedAt == nil {
			t.Errorf("%T read %+v, want %+v and completedAt", tc.obj, got, tc.want)
		}
		if n := got.NextAttemptAt; tc.want.Phase == v1alpha1.SyncPending && (n == nil || !n.Time.Equal(at.Add(4*time.Second))) {
			t.Errorf("%T read nextAttemptAt %v, want %s", tc.obj, n, at.Add(4*time.Second))
		}
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var before, after map[string]any
		if err := json.Unmarshal([]byte(tc.stored), &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Errorf("%T wrote back\n%s\nwant the stored\n%s", tc.obj, out, tc.stored)
		}
	}
}

// Every child names a parent that is a kind of the API, with a status of
// its own, and no child is a parent: the backlog metrics and the parent
// watch count children under ParentKind.
func TestEveryChildsParentIsAKind(t *testing.T) {
	kinds := map[string]bool{}
	for _, k := range v1alpha1.Kinds() {
		kinds[k] = true
	}
	children := 0
	for _, o := range v1alpha1.NewObjects() {
		c, ok := o.(v1alpha1.ChildObject)
		if !ok {
			continue
		}
		children++
		name := v1alpha1.KindOf(o)
		if !kinds[c.ParentKind()] {
			t.Errorf("%s's parent kind %q is no kind of the API", name, c.ParentKind())
		}
		for _, p := range v1alpha1.NewObjects() {
			if v1alpha1.KindOf(p) != c.ParentKind() {
				continue
			}
			if _, isChild := p.(v1alpha1.ChildObject); isChild {
				t.Errorf("%s's parent %s is itself a child", name, c.ParentKind())
			}
		}
	}
	if children < 2 {
		t.Errorf("%d child kinds, want PaperSync and SheetSync at least", children)
	}
}

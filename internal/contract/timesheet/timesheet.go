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

// Package timesheet holds what the Sheets ingest route and the
// SheetConnection and SheetSync controllers must agree on (seed 004): the
// ingest path derived from the ingest token, the SheetSync named from the
// session id, and the session's validation. It calls no upstream: the row
// a session becomes in the sheet is the SheetSync controller's.
package timesheet

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
)

// IngestPrefix is where the time tracker posts finished sessions.
const IngestPrefix = "/sheets/ingest/"

// IngestTokenKey is the key of the ingest token Secret.
const IngestTokenKey = "token"

// MinTokenLength is the shortest ingest token accepted: 16 characters of
// a random token is 96 bits at the least.
const MinTokenLength = 16

// IngestPath derives a connection's ingest path from its ingest token, as
// Flux's Receiver derives its path: knowing the path means knowing a hash
// of the token, and the path reveals nothing about the token. The route
// also wants the token itself as a Bearer token, and checks it by deriving
// the path again.
func IngestPath(token, namespace, name string) string {
	return capability.DerivedPath(IngestPrefix, token, namespace, name)
}

// ConnectionLabel carries a SheetSync's connection name, for listing.
const ConnectionLabel = "switchboard.dev/sheet-connection"

// SyncName names the SheetSync of one session of a connection: the same
// session posted twice is one object, so the second create is a no-op
// (seed 004 §2 SyncLog: connectionId + sessionId unique). The session id
// is hashed because it may hold characters a name may not.
func SyncName(connection, sessionID string) string {
	return capability.ChildName(connection, sessionID, 20)
}

// NewSync is the SheetSync of one session, owned by its connection (it
// goes with it).
func NewSync(c *v1alpha1.SheetConnection, s v1alpha1.TimeTrackerSession) *v1alpha1.SheetSync {
	return &v1alpha1.SheetSync{
		ObjectMeta: metav1.ObjectMeta{
			Name: SyncName(c.Name, s.ID), Namespace: c.Namespace,
			Labels: v1alpha1.ShardOf(c, map[string]string{ConnectionLabel: c.Name}),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "SheetConnection",
				Name: c.Name, UID: c.UID}},
		},
		Spec: v1alpha1.SheetSyncSpec{ConnectionRef: v1alpha1.LocalObjectReference{Name: c.Name}, Session: s},
	}
}

// Accepting reports whether a connection takes sessions, and why not:
// Active (seed 004 §2: otherwise 409), its sheet found, every mapped
// header in row 1 and every field in its own column (HeaderValid).
func Accepting(c *v1alpha1.SheetConnection) (bool, string) {
	switch {
	case c.Spec.Suspend || c.Status.Phase == v1alpha1.ConnectionRevoked:
		return false, "the connection is Revoked: connect a Google account first"
	case c.Status.Phase == v1alpha1.ConnectionError:
		return false, "the connection is in Error: Google refused the grant; connect again"
	case c.Status.Phase != v1alpha1.ConnectionActive:
		return false, "the connection is not Active yet"
	case len(c.Status.MissingHeaders) > 0:
		return false, "row 1 of the sheet lacks the mapped headers " + strings.Join(c.Status.MissingHeaders, ", ")
	}
	// The sheet found and every field given its own column.
	if h := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.HeaderValidCondition); h == nil || h.Status != metav1.ConditionTrue {
		why := "the sheet and its columns are not resolved yet"
		if h != nil {
			why = h.Message
		}
		return false, why
	}
	return true, ""
}

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

package session

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteAll ends every session of sess's Discord user: sign out
// everywhere (seed 003 deleteAllSessions, which emptied the set
// user:{uid}:sessions). sess is one Get returned. The user's sessions are
// listed from the API server by their UserLabel and each is deleted as it
// was read (UID precondition, "already gone" is done), sess's own last: if
// a delete fails, sess still stands, so the person can retry and the retry
// finds the rest. It returns how many are gone.
//
// A session made while DeleteAll runs (a sign-in in another browser at
// that very moment) is not in its list and survives it.
func (s *Store) DeleteAll(ctx context.Context, sess Session) (int, error) {
	list, err := s.listUser(ctx, sess.UserID)
	if err != nil {
		return 0, err
	}
	var own *corev1.Secret
	gone := 0
	for i := range list.Items {
		sec := &list.Items[i]
		if sec.Name == sess.secret {
			own = sec
			continue
		}
		if err := deleteSecret(ctx, s.Writer, sec); err != nil {
			return gone, err
		}
		gone++
	}
	if own != nil {
		if err := deleteSecret(ctx, s.Writer, own); err != nil {
			return gone, err
		}
		gone++
	}
	return gone, nil
}

// listUser lists the sessions of Discord user uid from the API server
// (the seed's SMEMBERS user:{uid}:sessions).
func (s *Store) listUser(ctx context.Context, uid string) (*corev1.SecretList, error) {
	if !validUserID.MatchString(uid) {
		return nil, fmt.Errorf("discord user id %q is not a snowflake", uid)
	}
	var list corev1.SecretList
	if err := s.Reader.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingLabels{Label: "true", UserLabel: uid}); err != nil {
		return nil, fmt.Errorf("list the sessions of Discord user %s: %w", uid, err)
	}
	return &list, nil
}

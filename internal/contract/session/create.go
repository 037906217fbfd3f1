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
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Create stores a new session for u with the Discord grant tok and returns
// its id, for the cookie. It then deletes the user's oldest sessions beyond
// MaxPerUser, and any of theirs that expired.
func (s *Store) Create(ctx context.Context, u User, tok oauth.Token) (string, error) {
	if !validUserID.MatchString(u.ID) {
		return "", fmt.Errorf("discord user id %q is not a snowflake", u.ID)
	}
	if tok.AccessToken == "" || tok.RefreshToken == "" {
		return "", errors.New("the Discord grant has no access or refresh token")
	}
	sid := capability.Random(sidBytes)
	now := s.now()
	data := map[string][]byte{}
	for k, v := range tok.Extra {
		data[k] = []byte(v)
	}
	data[oauth.KeyAccessToken] = []byte(tok.AccessToken)
	data[oauth.KeyRefreshToken] = []byte(tok.RefreshToken)
	data[oauth.KeyTokenType] = []byte(tok.TokenType)
	if !tok.Expiry.IsZero() {
		data[oauth.KeyExpiry] = []byte(tok.Expiry.UTC().Format(time.RFC3339))
	}
	data[KeyUserID] = []byte(u.ID)
	data[KeyUsername] = []byte(u.Username)
	data[KeyAvatar] = []byte(u.Avatar)
	data[KeyCreatedAt] = []byte(stamp(now))
	data[KeyLastSeenAt] = []byte(stamp(now))
	data[KeyExpiresAt] = []byte(stamp(now.Add(s.TTLOrDefault())))
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName(sid), Namespace: s.Namespace,
			Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue, Label: "true", UserLabel: u.ID}},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	if err := s.Writer.Create(ctx, sec); err != nil {
		return "", fmt.Errorf("create session Secret: %w", err)
	}
	if err := s.prune(ctx, u.ID, sec.Name, now); err != nil {
		return "", err
	}
	return sid, nil
}

// prune keeps the user's newest MaxPerUser sessions, the one just made
// always among them, and deletes the rest and any that expired.
func (s *Store) prune(ctx context.Context, uid, keep string, now time.Time) error {
	list, err := s.listUser(ctx, uid)
	if err != nil {
		return err
	}
	var others []*corev1.Secret
	for i := range list.Items {
		sec := &list.Items[i]
		switch {
		case sec.Name == keep:
		case Expired(sec, now, s.TTLOrDefault()):
			if err := deleteSecret(ctx, s.Writer, sec); err != nil {
				return err
			}
		default:
			others = append(others, sec)
		}
	}
	sort.Slice(others, func(i, j int) bool { return newer(others[i], others[j]) })
	for i := orDefault(s.MaxPerUser, DefaultMaxPerUser) - 1; i < len(others); i++ {
		if i < 0 {
			continue
		}
		if err := deleteSecret(ctx, s.Writer, others[i]); err != nil {
			return err
		}
	}
	return nil
}

// newer orders sessions newest first: by created_at, which has
// nanoseconds, then the API server's creationTimestamp, then the name.
func newer(a, b *corev1.Secret) bool {
	ta, tb := timeOf(a, KeyCreatedAt), timeOf(b, KeyCreatedAt)
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}

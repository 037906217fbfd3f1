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

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OAuthObject is a kind the OAuth routes connect (NotionIntegration,
// CalendarWatch, SheetConnection): its spec names the OAuth client and
// token Secrets and how early the grant is refreshed, its status embeds
// OAuthConnectStatus and records the access token's expiry. The OAuth
// phases, the token-Secret index and watch, and the OAuth routes read
// every such kind through it.
// +kubebuilder:object:generate=false
type OAuthObject interface {
	StatusObject
	// GetOAuthConnect is what the controller publishes for the webhook's
	// connect route (status.connectSecretName and the rest).
	GetOAuthConnect() *OAuthConnectStatus
	// GetOAuthCredentials is spec.oauth: the client and token Secrets.
	GetOAuthCredentials() OAuthCredentials
	// GetTokenRefreshBefore is how long before its expiry the access token
	// is refreshed.
	GetTokenRefreshBefore() time.Duration
	// GetWatchedSecrets names the Secrets, in the object's namespace, whose
	// change reconciles it at once: its token Secret (a grant the OAuth
	// callback wrote), and any other Secret the kind says.
	GetWatchedSecrets() []string
	// GetTokenStatus is what status records of the grant's access token:
	// its expiry, its last refresh and the refreshes failed since.
	GetTokenStatus() *TokenStatus
}

var (
	_ OAuthObject = (*NotionIntegration)(nil)
	_ OAuthObject = (*CalendarWatch)(nil)
	_ OAuthObject = (*SheetConnection)(nil)
)

// GetOAuthCredentials implements OAuthObject.
func (in *NotionIntegration) GetOAuthCredentials() OAuthCredentials { return in.Spec.OAuth }

// GetTokenRefreshBefore implements OAuthObject:
// spec.tokenRefresh.refreshBefore.
func (in *NotionIntegration) GetTokenRefreshBefore() time.Duration {
	return in.Spec.TokenRefresh.RefreshBefore.Duration
}

// GetWatchedSecrets implements OAuthObject: the token Secret.
func (in *NotionIntegration) GetWatchedSecrets() []string {
	return []string{in.Spec.OAuth.TokenSecretRef.Name}
}

// GetTokenStatus implements OAuthObject.
func (in *NotionIntegration) GetTokenStatus() *TokenStatus { return &in.Status.TokenStatus }

// GetOAuthCredentials implements OAuthObject.
func (in *CalendarWatch) GetOAuthCredentials() OAuthCredentials { return in.Spec.OAuth }

// GetTokenRefreshBefore implements OAuthObject: spec.tokenRefreshBefore.
func (in *CalendarWatch) GetTokenRefreshBefore() time.Duration {
	return in.Spec.TokenRefreshBefore.Duration
}

// GetWatchedSecrets implements OAuthObject: the token Secret.
func (in *CalendarWatch) GetWatchedSecrets() []string {
	return []string{in.Spec.OAuth.TokenSecretRef.Name}
}

// GetTokenStatus implements OAuthObject.
func (in *CalendarWatch) GetTokenStatus() *TokenStatus { return &in.Status.TokenStatus }

// GetOAuthCredentials implements OAuthObject.
func (in *SheetConnection) GetOAuthCredentials() OAuthCredentials { return in.Spec.OAuth }

// GetTokenRefreshBefore implements OAuthObject: spec.tokenRefreshBefore.
func (in *SheetConnection) GetTokenRefreshBefore() time.Duration {
	return in.Spec.TokenRefreshBefore.Duration
}

// GetWatchedSecrets implements OAuthObject: the token Secret, and the
// ingest token Secret (a new token is a new ingest path).
func (in *SheetConnection) GetWatchedSecrets() []string {
	return []string{in.Spec.OAuth.TokenSecretRef.Name, in.Spec.IngestTokenSecretRef.Name}
}

// GetTokenStatus implements OAuthObject.
func (in *SheetConnection) GetTokenStatus() *TokenStatus { return &in.Status.TokenStatus }

// Granted records a grant that works at now: its access token's expiry
// (a zero time records none), now as its last refresh when it was just
// refreshed, and no refresh failed since.
func (s *TokenStatus) Granted(expiry time.Time, refreshed bool, now time.Time) {
	setTime(&s.TokenExpiresAt, expiry)
	if refreshed {
		setTime(&s.LastTokenRefreshAt, now)
	}
	s.TokenRefreshFailures = 0
}

// RefreshFailed counts a refresh that failed (and may succeed when it is
// tried again).
func (s *TokenStatus) RefreshFailed() { s.TokenRefreshFailures++ }

// setTime sets *field to t unless t is zero or *field holds it already.
func setTime(field **metav1.Time, t time.Time) {
	if t.IsZero() || (*field != nil && (*field).Time.Equal(t)) {
		return
	}
	v := metav1.NewTime(t)
	*field = &v
}

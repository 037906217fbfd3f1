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

package tokens

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// issuedToken is what a token endpoint answered a refresh: the new access
// token, the refresh token when it rotated one, and the lifetime the
// engine gives the access token (Google's expires_in, or the lifetime
// assumed for a provider that states none).
type issuedToken struct {
	access, refresh string
	lifetime        time.Duration
}

// tokenCall makes the one call a refresh needs, as the OAuth engine makes
// it: a POST of the refresh_token grant to the kind's token endpoint,
// with the client authenticated by HTTP Basic, in the provider's body
// encoding (Notion's JSON, Google's form). Errors name no token.
func (k *tokenKind) tokenCall(ctx context.Context, refresh string) (issuedToken, error) {
	var body []byte
	contentType := "application/x-www-form-urlencoded"
	if k.provider.Encoding == oauth.JSON {
		body, _ = json.Marshal(map[string]string{"grant_type": "refresh_token", "refresh_token": refresh})
		contentType = "application/json"
	} else {
		body = []byte(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}.Encode())
	}
	req := outbound.Request{Upstream: k.provider.TokenUpstream, Method: http.MethodPost, Path: k.provider.TokenPath, Body: bytes.NewReader(body),
		Header: http.Header{"Content-Type": {contentType}, "Accept": {"application/json"}}}
	req.Header.Set("Authorization", basicAuth(k.clientID, k.clientSecret))
	resp, err := k.Out.Do(ctx, req)
	if err != nil {
		return issuedToken{}, fmt.Errorf("%s token endpoint: %w", k.provider.Name, err)
	}
	var answer struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresIn    int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(resp.Body, &answer); err != nil || answer.AccessToken == "" {
		return issuedToken{}, errors.New(k.provider.Name + " token endpoint: the answer has no access_token")
	}
	t := issuedToken{access: answer.AccessToken, refresh: answer.RefreshToken, lifetime: k.provider.AssumedLifetime}
	if answer.ExpiresIn > 0 {
		t.lifetime = time.Duration(answer.ExpiresIn) * time.Second
	}
	return t, nil
}

// basicAuth is an Authorization header value of HTTP Basic.
func basicAuth(id, secret string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", http.NoBody)
	r.SetBasicAuth(id, secret)
	return r.Header.Get("Authorization")
}

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

package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/pages"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// What the sign-in asks of Discord itself, and the pages it shows about
// Discord's answers.

// usersMePath is Discord's Get Current User.
const usersMePath = "/api/users/@me"

// discordBusy tells the person Discord is limiting requests: 503 with
// Retry-After, the sign-in kept, and the page loads itself again when the
// wait is over.
func discordBusy(w http.ResponseWriter, r *http.Request, wait time.Duration) error {
	return showPage(w, r, retrying(http.StatusServiceUnavailable, retryAfterSeconds(wait), pages.DiscordBusyTitle, pages.Say(pages.DiscordBusyLine)), nil)
}

// discordUser reads the account of an access token: GET /users/@me
// (discord-api-docs docs/resources/user, "Get Current User", which the
// identify scope allows). A limit remembered in limits is waited out
// without a request; a 429 is remembered there.
func discordUser(ctx context.Context, out *outbound.Client, limits *oauth.RateLimits, accessToken string) (session.User, error) {
	if wait := limits.Wait(upstream.Discord, usersMePath); wait > 0 {
		return session.User{}, fmt.Errorf("read the Discord user: %w", oauth.RateLimited(upstream.Discord, usersMePath, wait, false))
	}
	resp, err := out.Do(ctx, outbound.Request{Upstream: upstream.Discord, Path: usersMePath,
		Header: http.Header{"Authorization": {"Bearer " + accessToken}, "Accept": {"application/json"}}})
	if oe, ok := outbound.Classify(err); ok && oe.Status == http.StatusTooManyRequests {
		wait := limits.Observe(upstream.Discord, usersMePath, oe.Status, oe.Header, oe.Body)
		return session.User{}, fmt.Errorf("read the Discord user: %w", oauth.RateLimited(upstream.Discord, usersMePath, wait, true))
	}
	if err != nil {
		return session.User{}, fmt.Errorf("read the Discord user: %w", err)
	}
	limits.Observe(upstream.Discord, usersMePath, resp.Status, resp.Header, nil)
	var me struct {
		ID       string  `json:"id"`
		Username string  `json:"username"`
		Avatar   *string `json:"avatar"`
	}
	if err := json.Unmarshal(resp.Body, &me); err != nil {
		return session.User{}, outbound.PermanentError(upstream.Discord, "users/@me answer is not JSON", err)
	}
	u := session.User{ID: me.ID, Username: me.Username}
	if me.Avatar != nil {
		u.Avatar = *me.Avatar
	}
	if u.ID == "" {
		return session.User{}, outbound.PermanentError(upstream.Discord, "users/@me answer has no id", nil)
	}
	return u, nil
}

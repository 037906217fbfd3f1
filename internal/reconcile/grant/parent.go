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

package grant

import (
	"context"

	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// Token is obj's grant for the work of its children (the PaperSyncs of a
// NotionIntegration, the SheetSyncs of a SheetConnection), which their
// own controller does in batches (internal/reconcile/children): the
// access token as obj's token Secret holds it, refreshed first when less
// than obj's refreshBefore remains. It writes nothing of obj, whose status
// only obj's controller writes: a grant refused here shows on obj at its
// own Grant phase.
func (p *Phases[T]) Token(ctx context.Context, obj T) (Grant, error) {
	clientKey, tokenKey := oauth.Keys(obj.GetNamespace(), obj.GetOAuthCredentials())
	tok, err := p.Tokens.Ensure(ctx, p.providerOf(obj), clientKey, tokenKey, obj.GetTokenRefreshBefore(), false)
	if err != nil {
		return Grant{}, err
	}
	return Grant{Token: tok.AccessToken, ID: tok.Extra[oauth.KeyGrantedAt]}, nil
}

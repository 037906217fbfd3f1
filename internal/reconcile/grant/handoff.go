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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
)

// Grant is what the Grant phase hands the later phases of one reconcile.
type Grant struct {
	// Token is the access token. It lives for one reconcile: never
	// stored, logged or shown.
	Token string
	// ID names the grant Token came from (when the OAuth callback stored
	// it), so a phase can record that the provider refused this grant
	// without holding a token.
	ID string
}

var grantKey = runner.NewKey[Grant]()

// Of is the grant the Grant phase of this reconcile obtained (zero before
// it ran).
func Of(run *runner.Run) Grant { return grantKey.From(run) }

// Set hands g to the later phases of run: the Grant phase's work, and
// what a test of a later phase does instead of running it.
func Set(run *runner.Run, g Grant) { grantKey.Put(run, g) }

// SecretPath reads the token under key in the Secret name (the webhook
// Secret of a NotionIntegration, the ingest Secret of a SheetConnection)
// and derives the resource's secret path from it with derive. A missing
// Secret, or a token shorter than minLength, stalls the resource until a
// person fixes it.
func SecretPath(ctx context.Context, c client.Reader, obj client.Object, name, key string, minLength int,
	derive func(token, namespace, name string) string) (string, runner.Outcome) {
	var sec corev1.Secret
	ref := types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}
	if err := c.Get(ctx, ref, &sec); err != nil {
		if oauth.IsMissingSecret(err) {
			return "", runner.Stall(v1alpha1.SecretNotFoundReason, fmt.Errorf("the Secret %s was not found", name)).RecheckAfter(SecretRecheck)
		}
		return "", runner.Transient(v1alpha1.SecretReadFailedReason, fmt.Errorf("read Secret %s: %w", name, err))
	}
	token := string(sec.Data[key])
	if len(token) < minLength {
		return "", runner.Stall(v1alpha1.SecretNotFoundReason,
			fmt.Errorf("the Secret %s needs a key %q of at least %d characters", name, key, minLength)).RecheckAfter(SecretRecheck)
	}
	return derive(token, obj.GetNamespace(), obj.GetName()), runner.Continue()
}

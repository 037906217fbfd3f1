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

package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/oauth/targets"
)

// SetupOAuthReceiver registers the receiver of the OAuth grants the
// webhook server hands over in its namespace (the --state-namespace): the
// webhook holds no right to the resources' Secrets, so the manager
// exchanges each code and writes the grant (oauth.Receiver).
func SetupOAuthReceiver(mgr ctrl.Manager, engine *oauth.Engine, stateNamespace string) error {
	return (&oauth.Receiver{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Engine: engine,
		Targets: targets.All(), Namespace: stateNamespace}).SetupWithManager(mgr)
}

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

package main

import (
	"flag"
	"os"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// oauthFlags are what the manager must know of the webhook server's OAuth
// routes; both binaries take the same values.
type oauthFlags struct {
	publicURL, stateNamespace string
}

func (f *oauthFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.publicURL, "public-url", "", "Externally visible base URL of the webhook server (its --public-url), e.g. https://hooks.example.com: the OAuth connect links kept in each resource's <name>-oauth-connect Secret are built on it. Empty keeps only the token.")
	fs.StringVar(&f.stateNamespace, "state-namespace", podNamespace(), "Namespace of the webhook's OAuth state Secrets (its --state-namespace), where expired states are deleted.")
}

// podNamespace is the pod's namespace (the downward API's POD_NAMESPACE),
// or "default" outside a pod, as the webhook server defaults it.
func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "default"
}

// addStateCollector deletes expired OAuth states every minute on the
// leader (issue 7 §1.2: nothing else would delete a flow never finished).
func addStateCollector(mgr ctrl.Manager, namespace string) error {
	return mgr.Add(&oauth.StateCollector{Client: mgr.GetClient(), Namespace: namespace, Clock: clock.RealClock{},
		Interval: oauth.DefaultStateCollectInterval})
}

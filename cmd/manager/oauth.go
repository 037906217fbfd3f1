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
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

// podNamespace is the pod's namespace (the downward API's POD_NAMESPACE),
// or "default" outside a pod, as the webhook server defaults it.
func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "default"
}

// addCollectors deletes, on the leader, the expired Secrets the webhook
// leaves in its --state-namespace: OAuth states every minute (issue 7
// §1.2: nothing else would delete a flow never finished), and receivers'
// Discord sessions, which live beside them, every ten minutes.
func addCollectors(mgr ctrl.Manager, namespace string) error {
	for _, c := range []*oauth.Collector{oauth.NewStateCollector(mgr.GetClient(), namespace), session.NewCollector(mgr.GetClient(), namespace)} {
		if err := mgr.Add(c); err != nil {
			return fmt.Errorf("add the %s: %w", c.Name, err)
		}
	}
	return nil
}

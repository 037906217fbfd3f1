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

package namespaced_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
)

// Issue 35 §3: in a namespaced install the ReceiveLink sweep lists the
// overdue links of each watched namespace, as the manager's Roles allow;
// its cluster-wide List was forbidden there, so it logged "sweep
// incomplete" every 10 minutes and the safety net for overdue links never
// ran. (The suite fails on any request the API server refuses the
// chart's ServiceAccounts, so a sweep that tried the cluster-wide List
// fails it too.)
func TestTheSweepCompletesInANamespacedInstall(t *testing.T) {
	c, err := client.New(rbac.Manager, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(watch []string) error {
		s := &receivelink.Sweeper{Client: c, APIReader: c, Namespace: release, Watch: watch,
			Reconciler: &receivelink.Reconciler{Overdue: make(chan event.GenericEvent, 16)}}
		_, err := s.Sweep(context.Background())
		return err
	}
	if err := sweep(watched); err != nil {
		t.Fatalf("the sweep of the watched namespaces: %v", err)
	}
}

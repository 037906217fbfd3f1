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

package setup

import (
	"context"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/switchboard-dev/switchboard/internal/index"

	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// WebhookScope is the webhook server's scope: the watched namespaces, and
// Secrets cached only in its own (it holds no right to Secrets anywhere
// else), each condition without its message. cmd/webhook and the suites'
// webhook clusters (testenv.WebhookCluster) use it.
func WebhookScope(watch, own []string) Scope {
	return Scope{Watch: watch, Own: own, SecretsOnlyInOwn: true, ConditionStatusOnly: true}
}

// WebhookCluster is the webhook server's client and informer cache on cfg,
// as cmd/webhook, the suites and the benchmark rigs build it: the
// webhook's scope (WebhookScope: watch, and Secrets only in own), and the
// field indexes its routes find their objects by (index.Webhook), and the
// mapper both binaries use (NewMapper). opts change what a caller must (a
// test's logger). Start it to fill the cache.
func WebhookCluster(ctx context.Context, cfg *rest.Config, watch, own []string, opts ...func(*cluster.Options)) (cluster.Cluster, error) {
	scheme := Scheme()
	cl, err := cluster.New(cfg, func(o *cluster.Options) {
		o.Scheme = scheme
		o.Cache = WebhookScope(watch, own).CacheOptions(scheme)
		o.NewClient = newRecordsClient
		o.MapperProvider = NewMapper
		for _, f := range opts {
			f(o)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := index.RegisterFor(ctx, cl.GetCache(), index.Webhook); err != nil {
		return nil, err
	}
	return cl, nil
}

// Clients are a manager's or a cluster's clients.
type Clients interface {
	// GetClient is the cached client, which writes.
	GetClient() client.Client
	// GetAPIReader reads from the API server.
	GetAPIReader() client.Reader
}

// Engine is a binary's one OAuth engine: it reads Secrets from the API
// server and writes them through c's client, and calls the providers
// through out. The manager's (wire.Operator) and the webhook's sign-in
// are built here.
func Engine(c Clients, out *outbound.Client) *oauth.Engine {
	return &oauth.Engine{Store: &oauth.Store{Reader: c.GetAPIReader(), Writer: c.GetClient()}, Out: out}
}

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
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/grant"
)

// tokenPlan is when each object's first access token expires (as its
// token Secret says) and falls due for refresh, and the baseline's grant
// Secret of each.
type tokenPlan struct {
	expires, due map[string]time.Time
	// order is the objects by due instant.
	order             []string
	firstDue, lastDue time.Time
	// lead is how early the controller begins each refresh
	// (grant.RefreshLead of the kind's refreshBefore): every object must
	// be connected lead before firstDue.
	lead time.Duration
	// base holds each baseline grant Secret as last written.
	base map[string]*corev1.Secret
}

// connectGrants creates the kind's objects, each with its token Secret
// (its access token expiring refreshBefore after its due instant: as many
// due at each whole second of the window from firstDue) and the baseline's
// grant Secret, and waits until every object is Ready with the Grant
// phase having recorded that expiry, which must be before the controller
// begins the first refresh, its lead before firstDue.
func connectGrants(ctx context.Context, c client.Client, k *tokenKind, o tokenOptions, firstDue time.Time, l *tokenLog) (*tokenPlan, error) {
	n := o.grants
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}}); err != nil {
		return nil, err
	}
	if err := k.shared(ctx, c); err != nil {
		return nil, err
	}
	began := time.Now()
	p := &tokenPlan{expires: map[string]time.Time{}, due: map[string]time.Time{}, order: make([]string, n), base: map[string]*corev1.Secret{},
		lead: grant.RefreshLead(k.refreshBefore)}
	data, err := p.issueGrants(ctx, k, n, max(int(o.window/time.Second), 1), firstDue)
	if err != nil {
		return nil, err
	}
	l.plan(p)
	bases := make([]*corev1.Secret, n)
	err = bench.Parallel(n, tokenCreators, func(i int) error {
		name := p.order[i]
		if err := c.Create(ctx, managedSecret(k.ns, tokenSecretName(name), data[i])); err != nil {
			return err
		}
		bases[i] = managedSecret(k.ns, baseSecretName(name), map[string]string{oauth.KeyRefreshToken: k.grant()})
		if err := c.Create(ctx, bases[i]); err != nil {
			return err
		}
		return k.create(ctx, c, name, tokenSecretName(name))
	})
	if err != nil {
		return nil, err
	}
	for i, name := range p.order {
		p.base[name] = bases[i]
	}
	created := time.Since(began)
	if err := l.waitConnected(ctx, n, firstDue.Add(-p.lead)); err != nil {
		return nil, fmt.Errorf("%w: raise -token-budget (now %s)", err, o.budget)
	}
	fmt.Printf("setup: %d %ss created in %s (%d clients, with their token Secrets and the baseline's grants); all Ready, each token's expiry in status, %s after the first create\n",
		n, k.kind, created.Round(time.Millisecond), tokenCreators, time.Since(began).Round(time.Millisecond))
	return p, nil
}

// issueGrants issues p's n grants, as many due at each of seconds whole
// seconds from firstDue, by due second, so that the emulator's clock
// stands at each second's issue instant once; it answers each one's token
// Secret data.
func (p *tokenPlan) issueGrants(ctx context.Context, k *tokenKind, n, seconds int, firstDue time.Time) ([]map[string]string, error) {
	data := make([]map[string]string, n)
	for s := range seconds {
		lo, hi := (s*n+seconds-1)/seconds, ((s+1)*n+seconds-1)/seconds
		due := firstDue.Add(time.Duration(s) * time.Second)
		expiry := due.Add(k.refreshBefore)
		if k.expiring != nil {
			k.expiring(expiry)
		}
		err := bench.Parallel(hi-lo, tokenCreators, func(j int) error {
			i := lo + j
			name := tokenObjectName(i)
			p.order[i] = name
			var err error
			data[i], err = k.issue(ctx, k.grant(), expiry)
			return err
		})
		if err != nil {
			return nil, err
		}
		for i := lo; i < hi; i++ {
			p.expires[p.order[i]], p.due[p.order[i]] = expiry, due
		}
	}
	if k.expiring != nil {
		k.expiring(time.Time{})
	}
	p.firstDue, p.lastDue = p.due[p.order[0]], p.due[p.order[n-1]]
	return data, nil
}

// managedSecret is a Secret of string data with the operator's managed-by
// label, as the OAuth engine writes a token Secret: the manager caches it.
func managedSecret(ns, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Labels: map[string]string{v1alpha1.ManagedByLabel: v1alpha1.ManagedByValue}}, Type: corev1.SecretTypeOpaque, StringData: data}
}

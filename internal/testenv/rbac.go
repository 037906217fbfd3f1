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

package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ChartRBAC is the chart's RBAC installed in the test's API server: the
// ServiceAccounts, ClusterRoles, Roles and bindings `helm template`
// renders, created for real. Manager and Webhook are the test's config
// impersonating the two ServiceAccounts, so the binaries' code runs with
// exactly the rights a Helm install gives them; every request the API
// server refuses with 403 is recorded.
type ChartRBAC struct {
	// Namespace is the release namespace (the state namespace).
	Namespace string
	// ManagerUser and WebhookUser are the ServiceAccounts' user names.
	ManagerUser, WebhookUser string
	Manager, Webhook         *rest.Config

	mu      sync.Mutex
	denials []string
}

// InstallChartRBAC renders charts/switchboard into namespace (created when
// missing) with the given --set flags and creates its RBAC objects.
func InstallChartRBAC(e *Env, namespace string, set ...string) (*ChartRBAC, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs, err := ChartRBACObjects(ctx, namespace, set...)
	if err != nil {
		return nil, err
	}
	r := &ChartRBAC{Namespace: namespace}
	for _, u := range objs {
		if err := CreateInNamespace(ctx, e.Client, u); err != nil {
			return nil, err
		}
		if u.GetKind() == "ServiceAccount" {
			user := ServiceAccountUser(namespace, u.GetName())
			switch {
			case strings.HasSuffix(u.GetName(), "-manager"):
				r.ManagerUser, r.Manager = user, r.impersonate(e.Config, namespace, user)
			case strings.HasSuffix(u.GetName(), "-webhook"):
				r.WebhookUser, r.Webhook = user, r.impersonate(e.Config, namespace, user)
			}
		}
	}
	if r.Manager == nil || r.Webhook == nil {
		return nil, errors.New("the chart rendered no manager or webhook ServiceAccount")
	}
	return r, nil
}

// ChartRBACObjects renders charts/switchboard (release "sb") into
// namespace with the given --set flags and returns its ServiceAccounts,
// ClusterRoles, Roles and bindings, in the chart's order.
func ChartRBACObjects(ctx context.Context, namespace string, set ...string) ([]*unstructured.Unstructured, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	args := []string{"template", "sb", filepath.Join(root, "charts", "switchboard"), "--namespace", namespace}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var out, stderr bytes.Buffer
	if err := Helm(ctx, &out, &stderr, args...); err != nil {
		return nil, fmt.Errorf("helm template: %w\n%s", err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(&out, 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode the rendered chart: %w", err)
		}
		if slices.Contains([]string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}, u.GetKind()) {
			objs = append(objs, u)
		}
	}
}

// CreateInNamespace creates u, and first its namespace when it names one
// that does not exist yet.
func CreateInNamespace(ctx context.Context, c client.Client, u client.Object) error {
	if ns := u.GetNamespace(); ns != "" {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	if err := c.Create(ctx, u); err != nil {
		return fmt.Errorf("create %s %s: %w", u.GetObjectKind().GroupVersionKind().Kind, u.GetName(), err)
	}
	return nil
}

// ServiceAccountUser is the user name a token of the ServiceAccount
// namespace/name authenticates as.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// ServiceAccountGroups are the groups a token of a ServiceAccount of
// namespace authenticates with.
func ServiceAccountGroups(namespace string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
}

// WithChartRBAC is a Main setup that installs the chart's RBAC into
// namespace (InstallChartRBAC) and, once the package's tests have run,
// fails the run if the API server refused any request of either
// ServiceAccount: a platform team's install must see no RBAC denial.
func WithChartRBAC(r **ChartRBAC, namespace string, set ...string) func(*Env) (func(), error) {
	return func(e *Env) (func(), error) {
		installed, err := InstallChartRBAC(e, namespace, set...)
		if err != nil {
			return nil, err
		}
		*r = installed
		e.afterRun = append(e.afterRun, func() error {
			if d := installed.Denials(); len(d) > 0 {
				return fmt.Errorf("the API server refused %d requests of the chart's ServiceAccounts:\n%s", len(d), strings.Join(d, "\n"))
			}
			return nil
		})
		return func() {}, nil
	}
}

// impersonate is cfg acting as a ServiceAccount, as its token would.
func (r *ChartRBAC) impersonate(cfg *rest.Config, namespace, user string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: ServiceAccountGroups(namespace)}
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil && resp.StatusCode == http.StatusForbidden {
				r.mu.Lock()
				r.denials = append(r.denials, user+": "+req.Method+" "+req.URL.Path)
				r.mu.Unlock()
			}
			return resp, err
		})
	})
	return c
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// Denials are the requests the API server refused so far.
func (r *ChartRBAC) Denials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.denials...)
}

// Drain returns the denials recorded so far and forgets them: for a test
// that provokes one on purpose.
func (r *ChartRBAC) Drain() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.denials
	r.denials = nil
	return d
}

// Can asks the API server (SubjectAccessReview) whether user may do verb
// on resource ("secrets", group "") in namespace ("" for every namespace).
func (r *ChartRBAC) Can(e *Env, user, verb, resource, namespace string) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             ServiceAccountGroups(r.Namespace),
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Resource: resource},
	}}
	if err := e.Client.Create(context.Background(), sar); err != nil {
		return false, err
	}
	return sar.Status.Allowed, nil
}

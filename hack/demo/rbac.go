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
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// The demo runs Switchboard as a platform team's namespaced install would
// (issue 17): the chart's ServiceAccounts with the RBAC `helm template`
// renders for watchNamespaces, the binaries confined to those namespaces.
// So every flow below — OAuth connect and callback, Notion Automation,
// Calendar push, Sheets ingest, share-link resolve — runs with exactly the
// rights a Helm install grants, and the demo fails on any RBAC refusal.
// releaseNamespace is the chart's namespace, also the binaries'
// --state-namespace and --link-namespace (the short-token objects and the
// default key Secret), as in a Helm install.
const releaseNamespace = "switchboard-system"

// watched are the namespaces the install confines Switchboard to: the
// samples' and a second team's. unwatched is a third team's, which
// Switchboard must leave alone.
var (
	watched   = []string{scenario.Namespace, "demo-b"}
	unwatched = "demo-elsewhere"
)

// installRBAC creates the namespaces and the chart's ServiceAccounts and
// RBAC for a namespaced install, and writes a kubeconfig for each
// ServiceAccount (the admin's, impersonating it). It returns the manager's
// and the webhook's kubeconfig paths.
func (d *demo) installRBAC(ctx context.Context, adminKubeconfig string) (manager, webhook string, err error) {
	for _, ns := range append([]string{releaseNamespace, unwatched}, watched...) {
		if err := d.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
			return "", "", err
		}
	}
	objs, err := testenv.ChartRBACObjects(ctx, releaseNamespace, "watchNamespaces={"+strings.Join(watched, ",")+"}")
	if err != nil {
		return "", "", err
	}
	roles := 0
	for _, u := range objs {
		if err := testenv.CreateInNamespace(ctx, d.c, u); err != nil {
			return "", "", err
		}
		switch u.GetKind() {
		case "Role":
			roles++
		case "ClusterRole":
			if rulesName(u, "secrets") {
				return "", "", fmt.Errorf("the namespaced chart renders ClusterRole %s with a secrets rule", u.GetName())
			}
		case "ServiceAccount":
			path := filepath.Join(d.dir, "kubeconfig-"+u.GetName())
			if err := impersonating(adminKubeconfig, path, testenv.ServiceAccountUser(releaseNamespace, u.GetName())); err != nil {
				return "", "", err
			}
			switch {
			case strings.HasSuffix(u.GetName(), "-manager"):
				manager = path
			case strings.HasSuffix(u.GetName(), "-webhook"):
				webhook = path
			}
		}
	}
	if manager == "" || webhook == "" {
		return "", "", errors.New("the chart rendered no manager or webhook ServiceAccount")
	}
	fmt.Printf("    watchNamespaces=%v: %d Roles, no ClusterRole with Secrets; the manager and webhook run as their ServiceAccounts\n", watched, roles)
	return manager, webhook, nil
}

// rulesName says whether any rule of a (Cluster)Role names resource.
func rulesName(u *unstructured.Unstructured, resource string) bool {
	rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
	for _, r := range rules {
		res, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "resources")
		for _, x := range res {
			if x == resource || x == "*" {
				return true
			}
		}
	}
	return false
}

// impersonating writes to path the kubeconfig at admin acting as user, with
// the groups a ServiceAccount's token carries.
func impersonating(admin, path, user string) error {
	cfg, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		return err
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate = user
		a.ImpersonateGroups = testenv.ServiceAccountGroups(releaseNamespace)
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// otherTeams stocks a slide in the second watched namespace and one in the
// unwatched namespace.
func (d *demo) otherTeams(ctx context.Context) error {
	for _, ns := range []string{watched[1], unwatched} {
		obj := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: "team-deck", Namespace: ns}}
		obj.Spec.URL = scenario.DeckURL
		if err := d.c.Create(ctx, obj); err != nil {
			return fmt.Errorf("create SlideStock %s/team-deck: %w", ns, err)
		}
	}
	return nil
}

// checkConfinement checks the second watched namespace's SlideStock Ready,
// the unwatched one untouched, and no RBAC refusal in either binary's log.
func (d *demo) checkConfinement(ctx context.Context) error {
	key := client.ObjectKey{Namespace: watched[1], Name: "team-deck"}
	if err := poll.Until(ctx, "", 100*time.Millisecond, time.Minute, func() (bool, error) {
		var s v1alpha1.SlideStock
		return d.c.Get(ctx, key, &s) == nil && s.Status.Phase == v1alpha1.SlideReady, nil
	}); err != nil {
		return fmt.Errorf("SlideStock %s not Ready: %w", key, err)
	}
	var other v1alpha1.SlideStock
	if err := d.c.Get(ctx, client.ObjectKey{Namespace: unwatched, Name: "team-deck"}, &other); err != nil {
		return err
	}
	if other.Status.Phase != "" || len(other.Status.Conditions) != 0 {
		return fmt.Errorf("SlideStock %s/team-deck in an unwatched namespace was reconciled: %+v", unwatched, other.Status)
	}
	fmt.Printf("    %s/team-deck Ready; %s/team-deck untouched (not watched)\n", watched[1], unwatched)
	refused := regexp.MustCompile(`is forbidden: User \\?"system:serviceaccount:`)
	for _, p := range d.procs {
		b, err := os.ReadFile(p.Log)
		if err != nil {
			return err
		}
		if n := len(refused.FindAll(b, -1)); n > 0 {
			return fmt.Errorf("the API server refused the %s %d times (see %s)", p.Name, n, p.Log)
		}
	}
	fmt.Println("    no RBAC refusal in the manager's or the webhook's log")
	return nil
}

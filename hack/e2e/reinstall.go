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
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// reinstall uninstalls the release and installs it again: the CRDs and
// every user's object and Secret stay through the uninstall, and the new
// release picks them up (all Ready again, new events land).
func (e *e2e) reinstall(ctx context.Context) error {
	before, err := e.userObjects(ctx)
	if err != nil {
		return err
	}
	if err := e.uninstall(ctx); err != nil {
		return err
	}
	if err := e.checkKept(ctx, before); err != nil {
		return err
	}
	var watch v1alpha1.CalendarWatch
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: scenario.Namespace, Name: scenario.CalendarWatchName}, &watch); err != nil {
		return err
	}
	if watch.Status.Channel == nil {
		return errors.New("the walk's CalendarWatch has no channel")
	}
	oldChannel := watch.Status.Channel.ID

	if err := e.install(ctx); err != nil {
		return err
	}
	if err := e.newReleaseAtWork(ctx, &watch, oldChannel); err != nil {
		return err
	}
	// As a load balancer does, send traffic once the node port routes to
	// the new pods: kube-proxy programs the Service a moment after its
	// endpoints are ready.
	if err := e.waitRouted(ctx); err != nil {
		return err
	}
	// The load's keep-alive connections from before went through the old
	// Service, which helm uninstall deletes before the Deployment (helm's
	// UninstallOrder): the old pods' closing of them may never reach the
	// sender, and a request on one waits for its timeout. A sender whose
	// Service was deleted starts with new connections, as the load's now
	// do.
	l, err := e.loadGen(ctx)
	if err != nil {
		return err
	}
	l.hc.CloseIdleConnections()
	return e.underLoad(ctx, "the new release", func(context.Context) error { return nil })
}

// uninstall runs helm uninstall and waits until the release's pods are
// gone.
func (e *e2e) uninstall(ctx context.Context) error {
	out, err := e.helm(ctx, "uninstall", releaseName, "--wait", "--timeout", "3m")
	if err != nil {
		return err
	}
	fmt.Printf("    %s", out)
	return poll.Until(ctx, "the release's pods gone", pollEvery, 2*time.Minute, func() (bool, error) {
		var pods corev1.PodList
		if err := e.c.List(ctx, &pods, client.InNamespace(releaseNamespace)); err != nil {
			return false, err
		}
		return len(pods.Items) == 0, fmt.Errorf("%d pods left", len(pods.Items))
	})
}

// checkKept checks that the uninstall left Switchboard's CRDs and the
// users' objects and Secrets (before, from userObjects), with their uids.
func (e *e2e) checkKept(ctx context.Context, before map[string]types.UID) error {
	crds := &unstructured.UnstructuredList{}
	crds.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinitionList"})
	if err := e.c.List(ctx, crds); err != nil {
		return err
	}
	kept := 0
	for _, c := range crds.Items {
		if g, _, _ := unstructured.NestedString(c.Object, "spec", "group"); g == v1alpha1.GroupVersion.Group {
			kept++
		}
	}
	after, err := e.userObjects(ctx)
	if err != nil {
		return err
	}
	for k, uid := range before {
		if after[k] != uid {
			return fmt.Errorf("%s did not survive the uninstall (uid %s, now %q)", k, uid, after[k])
		}
	}
	if kept != len(v1alpha1.Kinds()) {
		return fmt.Errorf("%d Switchboard CRDs after the uninstall, want %d", kept, len(v1alpha1.Kinds()))
	}
	fmt.Printf("    after the uninstall: %d CRDs and all %d of the users' objects and Secrets in %s, with the same uids\n", kept, len(before), scenario.Namespace)
	return nil
}

// newReleaseAtWork shows the new release at work on the objects whose
// statuses outlived the old one: the walk's Calendar channel (oldChannel),
// which the sandbox grants for seconds, renewed by the new manager; a new
// SlideStock reconciled; every object Ready.
func (e *e2e) newReleaseAtWork(ctx context.Context, watch *v1alpha1.CalendarWatch, oldChannel string) error {
	if err := poll.Until(ctx, "the CalendarWatch's channel renewed by the new release", pollEvery, 2*time.Minute, func() (bool, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(watch), watch); err != nil {
			return false, err
		}
		ch := watch.Status.Channel
		return ch != nil && ch.ID != oldChannel && meta.IsStatusConditionTrue(watch.Status.Conditions, v1alpha1.ReadyCondition), errors.New("not yet")
	}); err != nil {
		return err
	}
	if _, err := e.stock(ctx, scenario.Namespace, "after-reinstall", time.Minute); err != nil {
		return err
	}
	if err := poll.Until(ctx, "every object Ready", pollEvery, 2*time.Minute, func() (bool, error) {
		err := (&scenario.Demo{C: e.c}).CheckTable(ctx, nil)
		return err == nil, err
	}); err != nil {
		return err
	}
	fmt.Printf("    the new release renewed the CalendarWatch's channel (%s → %s) and stocked a new SlideStock\n", oldChannel, watch.Status.Channel.ID)
	return nil
}

// waitRouted waits until the node port answers GET / on five new
// connections in a row.
func (e *e2e) waitRouted(ctx context.Context) error {
	fresh := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ok := 0
	return poll.Until(ctx, "the node port routing to the webhook", pollEvery, time.Minute, func() (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, publicURL+"/", nil)
		resp, err := fresh.Do(req)
		if err != nil {
			ok = 0
			return false, err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			ok = 0
			return false, fmt.Errorf("GET / answered %d", resp.StatusCode)
		}
		ok++
		return ok == 5, nil
	})
}

// userObjects are the walk's namespace's Switchboard objects and Secrets,
// by kind/name, with their uids.
func (e *e2e) userObjects(ctx context.Context) (map[string]types.UID, error) {
	out := map[string]types.UID{}
	var secrets corev1.SecretList
	if err := e.c.List(ctx, &secrets, client.InNamespace(scenario.Namespace)); err != nil {
		return nil, err
	}
	for _, o := range secrets.Items {
		out["Secret/"+o.Name] = o.UID
	}
	err := scenario.EachObject(ctx, e.c, false, func(kind string, o *unstructured.Unstructured) error {
		out[kind+"/"+o.GetName()] = o.GetUID()
		return nil
	}, client.InNamespace(scenario.Namespace))
	return out, err
}

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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/hack/internal/scenario"
)

// smoke checks the release end to end once: a SlideStock reaches Ready
// (the manager in its pod reached the API server through the
// `kubernetes` Service and the sandbox through the bridge), and the
// webhook Service's ClusterIP, reached from the host through kube-proxy's
// rules, answers an unknown path with the JSON 404.
func (e *e2e) smoke(ctx context.Context) error {
	if err := e.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: smokeNamespace}}); err != nil {
		return err
	}
	s, err := e.stock(ctx, smokeNamespace, "docswell-deck", 2*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("    SlideStock %s/%s Ready: %q (%s)\n", s.Namespace, s.Name, s.Status.Title, s.Status.Provider)

	var svc corev1.Service
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: releaseName + "-webhook"}, &svc); err != nil {
		return fmt.Errorf("the webhook Service: %w", err)
	}
	if len(svc.Spec.Ports) == 0 || svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return fmt.Errorf("the webhook Service has no ClusterIP and port: %+v", svc.Spec)
	}
	url := fmt.Sprintf("http://%s/no/such/route", net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(svc.Spec.Ports[0].Port)))
	var status int
	var body []byte
	// kube-proxy programs the Service's rules when its endpoints are
	// ready: until then the ClusterIP does not answer.
	if err := poll.Until(ctx, "the webhook Service at "+url, pollEvery, time.Minute, func() (bool, error) {
		var err error
		status, body, err = httpGet(ctx, url)
		return err == nil, err
	}); err != nil {
		return err
	}
	// The webhook's error format: {"error":{"code":…,"message":…,"details":{}}}.
	var answer struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if status != 404 || json.Unmarshal(body, &answer) != nil || answer.Error.Code != "NOT_FOUND" {
		return fmt.Errorf("GET %s answered %d %s, want 404 with code NOT_FOUND", url, status, body)
	}
	fmt.Printf("    GET %s → %d %s\n", url, status, bytes.TrimSpace(body))
	return nil
}

// stock creates a SlideStock of scenario.DeckURL and waits until the
// manager has stocked it (Ready), failing at once if it Failed.
func (e *e2e) stock(ctx context.Context, namespace, name string, timeout time.Duration) (*v1alpha1.SlideStock, error) {
	s := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	s.Spec.URL = scenario.DeckURL
	if err := e.c.Create(ctx, s); err != nil {
		return nil, fmt.Errorf("create SlideStock %s: %w", name, err)
	}
	return s, poll.Until(ctx, "SlideStock "+name+" Ready", pollEvery, timeout, func() (bool, error) {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return false, err
		}
		if s.Status.Phase == v1alpha1.SlideFailed {
			return false, fmt.Errorf("SlideStock %w: %s", errFailed, s.Status.LastError)
		}
		return s.Status.Phase == v1alpha1.SlideReady, fmt.Errorf("phase %q", s.Status.Phase)
	})
}

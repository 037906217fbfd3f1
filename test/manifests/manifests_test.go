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

// Package manifests checks the install manifests (config/default) against a
// real API server, so a typo in a Deployment or a Role fails here rather
// than on a platform team's cluster.
package manifests

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func TestDefaultInstallIsAcceptedByTheAPIServer(t *testing.T) {
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "kubectl", "kustomize", root+"/config/default").Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	kinds := map[string]int{}
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		kinds[u.GetKind()]++
		if u.GetKind() == "Namespace" {
			// Namespaced objects need their namespace to exist, even in a dry run.
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: u.GetName()}}
			if err := env.Client.Create(ctx, ns); err != nil {
				t.Fatal(err)
			}
			continue
		}
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.DryRunAll, client.ForceOwnership, client.FieldOwner("manifests-test"))
		if err != nil {
			t.Errorf("%s %s/%s refused: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	// A CRD for each kind: config/crd/kustomization.yaml lists
	// config/crd/bases, as make manifests writes it.
	for kind, want := range map[string]int{"CustomResourceDefinition": len(v1alpha1.Kinds()), "Deployment": 2, "ClusterRole": 2, "ServiceAccount": 2, "Service": 1} {
		if kinds[kind] != want {
			t.Errorf("config/default has %d %s, want %d", kinds[kind], kind, want)
		}
	}
}

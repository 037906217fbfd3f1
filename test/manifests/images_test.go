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

package manifests

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// TestTheInstallRunsTheImagesTheChartDoes: `kubectl apply -k
// config/default` and `helm install` with the chart's defaults run the
// same images, ghcr.io/switchboard-dev/switchboard/<name>:<appVersion>, the
// names make release builds; neither a :latest nor an untagged name,
// which would run whatever was pushed last.
func TestTheInstallRunsTheImagesTheChartDoes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kustomized, err := exec.CommandContext(ctx, "kubectl", "kustomize", root+"/config/default").Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	var chart, stderr bytes.Buffer
	if err := testenv.Helm(ctx, &chart, &stderr, "template", "switchboard", root+"/charts/switchboard"); err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	install, helm := images(t, kustomized), images(t, chart.Bytes())
	if !maps.Equal(install, helm) {
		t.Errorf("config/default runs %v, the chart %v", install, helm)
	}
	for _, component := range []string{"manager", "webhook"} {
		ref := install[component+"/"+component]
		name, tag, ok := strings.Cut(ref, ":")
		if !ok || tag == "" || tag == "latest" || !strings.HasSuffix(name, "/"+component) || strings.Contains(tag, "/") {
			t.Errorf("config/default's %s runs %q, want <repository>/%s:<appVersion>", component, ref, component)
		}
	}
}

// images maps "<component>/<container>" to the image of each Deployment's
// containers in the YAML stream b.
func images(t *testing.T, b []byte) map[string]string {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	out := map[string]string{}
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if u.GetKind() != "Deployment" {
			continue
		}
		component, _, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "labels", "app.kubernetes.io/component")
		for _, field := range []string{"initContainers", "containers"} {
			containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", field)
			for _, c := range containers {
				c, _ := c.(map[string]any)
				name, _ := c["name"].(string)
				image, _ := c["image"].(string)
				out[component+"/"+name] = image
			}
		}
	}
}

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
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	yamlv3 "go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// image is one entry of artifacthub.io/images.
type image struct {
	Name      string   `yaml:"name"`
	Image     string   `yaml:"image"`
	Platforms []string `yaml:"platforms"`
}

// images renders the chart with its default values (as Artifact Hub's own
// scan does, but for the Kubernetes version the chart targets) and lists
// every container image of the rendered objects, with the platforms
// `make release` builds (the Makefile's RELEASE_PLATFORMS).
func images(s sources, k8s string) ([]image, error) {
	platforms, err := makefileVar(s.root, "RELEASE_PLATFORMS")
	if err != nil {
		return nil, err
	}
	out, err := helmTemplate(s, k8s)
	if err != nil {
		return nil, err
	}
	var refs []string
	dec := yamlv3.NewDecoder(bytes.NewReader(out))
	for {
		var obj any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("helm template's output: %w", err)
		}
		containerImages(obj, &refs)
	}
	if len(refs) == 0 {
		return nil, errors.New("the chart rendered no container image")
	}
	slices.Sort(refs)
	var list []image
	for _, ref := range slices.Compact(refs) {
		repo, _, _ := strings.Cut(ref, "@")
		if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		list = append(list, image{Name: path.Base(repo), Image: ref, Platforms: strings.Split(platforms, ",")})
	}
	return list, nil
}

// containerImages collects the image of every container, init container
// and ephemeral container found anywhere in a rendered object.
func containerImages(v any, refs *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if list, ok := sub.([]any); ok && slices.Contains([]string{"containers", "initContainers", "ephemeralContainers"}, k) {
				for _, c := range list {
					if c, ok := c.(map[string]any); ok {
						if ref, ok := c["image"].(string); ok {
							*refs = append(*refs, ref)
						}
					}
				}
			}
			containerImages(sub, refs)
		}
	case []any:
		for _, sub := range v {
			containerImages(sub, refs)
		}
	}
}

// helmTemplate renders the chart with its default values, in a throwaway
// helm home so no user configuration leaks in.
func helmTemplate(s sources, k8s string) ([]byte, error) {
	if _, err := os.Stat(s.helm); err != nil {
		return nil, fmt.Errorf("helm not found at %s: run `make helm` or set HELM", s.helm)
	}
	home, err := os.MkdirTemp("", "chartgen-helm-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(home) }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	chart := filepath.Join(s.root, "charts", "switchboard")
	cmd := exec.CommandContext(ctx, s.helm, "template", "switchboard", chart, "--namespace", "switchboard-system", "--kube-version", k8s) //nolint:gosec // the pinned helm
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm template: %w\n%s", err, stderr.String())
	}
	return out, nil
}

// crdCard is one entry of artifacthub.io/crds.
type crdCard struct {
	Kind        string `yaml:"kind"`
	Version     string `yaml:"version"`
	Name        string `yaml:"name"`
	DisplayName string `yaml:"displayName"`
	Description string `yaml:"description"`
}

// crdCards lists the CRDs of config/crd/bases: the storage version, and
// the description of its schema (what `kubectl explain` prints). It
// returns too the group/kind of each, to pick the examples by.
func crdCards(dir string) ([]crdCard, map[string]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("no CRDs in %s", dir)
	}
	var cards []crdCard
	groupKinds := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f) //nolint:gosec // a file of this repository
		if err != nil {
			return nil, nil, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Storage })
		if i < 0 || crd.Spec.Versions[i].Schema == nil || crd.Spec.Versions[i].Schema.OpenAPIV3Schema == nil {
			return nil, nil, fmt.Errorf("%s: no storage version with a schema", f)
		}
		v := crd.Spec.Versions[i]
		desc := strings.Join(strings.Fields(v.Schema.OpenAPIV3Schema.Description), " ")
		if desc == "" {
			return nil, nil, fmt.Errorf("%s: the schema has no description (the kind's doc comment)", f)
		}
		kind := crd.Spec.Names.Kind
		cards = append(cards, crdCard{Kind: kind, Version: v.Name, Name: crd.Name, DisplayName: words(kind), Description: desc})
		groupKinds[crd.Spec.Group+"/"+kind] = true
	}
	return cards, groupKinds, nil
}

// words spells a kind as words: SheetConnection → Sheet Connection.
func words(kind string) string {
	var b strings.Builder
	for i, r := range kind {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// crdExamples is every custom resource of config/samples, in the order of
// its kustomization.yaml, as a YAML list; the samples' comments stay out.
func crdExamples(dir string, groupKinds map[string]bool) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml")) //nolint:gosec // a file of this repository
	if err != nil {
		return "", err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		return "", fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	list := &yamlv3.Node{Kind: yamlv3.SequenceNode}
	covered := map[string]bool{}
	for _, r := range k.Resources {
		docs, err := sampleObjects(filepath.Join(dir, r))
		if err != nil {
			return "", err
		}
		for _, d := range docs {
			var meta struct {
				APIVersion string `yaml:"apiVersion"`
				Kind       string `yaml:"kind"`
			}
			if err := d.Decode(&meta); err != nil {
				return "", fmt.Errorf("%s: %w", r, err)
			}
			group, _, _ := strings.Cut(meta.APIVersion, "/")
			if gk := group + "/" + meta.Kind; groupKinds[gk] {
				list.Content = append(list.Content, d)
				covered[gk] = true
			}
		}
	}
	for gk := range groupKinds {
		if !covered[gk] {
			return "", fmt.Errorf("config/samples has no example of %s: add one to its kustomization.yaml", gk)
		}
	}
	return yamlString(list)
}

// sampleObjects decodes every document of a sample file without comments.
func sampleObjects(file string) ([]*yamlv3.Node, error) {
	raw, err := os.ReadFile(file) //nolint:gosec // a file of this repository
	if err != nil {
		return nil, err
	}
	var docs []*yamlv3.Node
	dec := yamlv3.NewDecoder(bytes.NewReader(raw))
	for {
		var doc yamlv3.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return docs, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(doc.Content) == 1 && doc.Content[0].Kind == yamlv3.MappingNode {
			docs = append(docs, uncommented(doc.Content[0]))
		}
	}
}

func uncommented(n *yamlv3.Node) *yamlv3.Node {
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		uncommented(c)
	}
	return n
}

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

package slides

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// gid is a real-looking Google file id (the Sheets API's sample
// spreadsheet), the one examples.json uses.
const gid = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"

func TestAcceptsWhatPeopleCopy(t *testing.T) {
	for _, tc := range AcceptedExamples() {
		t.Run(tc.URL, func(t *testing.T) {
			ref, err := Parse(tc.URL)
			if err != nil {
				t.Fatal(err)
			}
			if ref.CanonicalURL != tc.Canonical {
				t.Fatalf("canonical = %s, want %s", ref.CanonicalURL, tc.Canonical)
			}
		})
	}
}

func TestProviderAndParts(t *testing.T) {
	ref, _ := Parse("https://www.docswell.com/s/takai/59VDWM-x")
	if ref.Provider != Docswell || ref.User != "takai" || ref.ID != "59VDWM" {
		t.Fatalf("docswell ref = %+v", ref)
	}
	ref, _ = Parse("https://speakerdeck.com/jnunemaker/atom")
	if ref.Provider != SpeakerDeck || ref.User != "jnunemaker" || ref.ID != "atom" {
		t.Fatalf("speakerdeck ref = %+v", ref)
	}
	ref, _ = Parse("https://docs.google.com/presentation/d/" + gid + "/edit")
	if ref.Provider != GoogleSlides || ref.ID != gid || ref.User != "" {
		t.Fatalf("google ref = %+v", ref)
	}
}

func TestRefusesWithAReason(t *testing.T) {
	for _, tc := range RefusedExamples() {
		t.Run(tc.URL, func(t *testing.T) {
			_, err := Parse(tc.URL)
			if !errors.Is(err, ErrNotPresentation) {
				t.Fatalf("got %v, want ErrNotPresentation", err)
			}
			if !strings.Contains(err.Error(), tc.Reason) {
				t.Fatalf("reason %q lacks %q", err, tc.Reason)
			}
		})
	}
}

// TestCRDRuleIsTheGrammar: the CEL rule the API server runs on spec.url is
// AdmissionRule, so admission and Parse cannot drift apart.
func TestCRDRuleIsTheGrammar(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", "switchboard.dev_slidestocks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties struct {
							Spec struct {
								Properties struct {
									URL struct {
										Validations []struct{ Rule, Message string } `json:"x-kubernetes-validations"`
									} `json:"url"`
								} `json:"properties"`
							} `json:"spec"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil || len(crd.Spec.Versions) != 1 {
		t.Fatalf("read the CRD: %v", err)
	}
	rules := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties.Spec.Properties.URL.Validations
	if len(rules) != 1 || rules[0].Rule != AdmissionRule() || rules[0].Message != AdmissionMessage {
		t.Fatalf("spec.url's CEL rule is not slides.AdmissionRule(); put this in the XValidation marker of "+
			"api/v1alpha1/slidestock_types.go, with each backslash doubled, and run make manifests:\n%s\n\nthe CRD has:\n%+v",
			AdmissionRule(), rules)
	}
}

// FuzzParse: Parse never panics; whatever it accepts has a canonical URL
// on one of the three fixed hosts (the SSRF guard of seed 001 §10.1), with
// no query, fragment or credentials, that parses back to the same Ref.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"https://speakerdeck.com/jnunemaker/atom", "https://www.docswell.com/s/takai/59VDWM-x#p2",
		"https://docs.google.com/presentation/u/0/d/" + gid + "/edit?usp=sharing",
		"https://docs.google.com/presentation/d/e/2PACX-1vQexampleexampleexample/pub",
		"http://speakerdeck.com/a/b?c=d", "https://docswell.com/slide/X/embed", "javascript:alert(1)",
		"HTTPS://SpeakerDeck.COM:443//a//b/#c", " https://docs.google.com/presentation/u/0/d/e/" + gid + "/pub ",
	} {
		f.Add(s)
	}
	for _, e := range AcceptedExamples() {
		f.Add(e.URL)
	}
	hosts := map[string]bool{"speakerdeck.com": true, "www.docswell.com": true, "docs.google.com": true}
	f.Fuzz(func(t *testing.T, in string) {
		ref, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrNotPresentation) {
				t.Fatalf("error %v does not wrap ErrNotPresentation", err)
			}
			return
		}
		u, perr := url.Parse(ref.CanonicalURL)
		if perr != nil || u.Scheme != "https" || !hosts[u.Host] || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			t.Fatalf("%q → canonical %q is not a fixed-host https URL", in, ref.CanonicalURL)
		}
		again, err := Parse(ref.CanonicalURL)
		if err != nil || again != ref {
			t.Fatalf("canonical %q does not parse back: %+v, %v (first %+v)", ref.CanonicalURL, again, err, ref)
		}
	})
}

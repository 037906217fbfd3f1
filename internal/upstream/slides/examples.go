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
	_ "embed"
	"encoding/json"
	"strings"
)

// Example is a URL and what Parse makes of it. The examples are the
// parser's test cases, exported so that the API tests send the same URLs
// through a real API server and check that admission agrees.
type Example struct {
	URL string `json:"url"`
	// Canonical is the canonical URL of an accepted example.
	Canonical string `json:"canonical,omitempty"`
	// Reason is a part of Parse's refusal message for a refused example.
	Reason string `json:"reason,omitempty"`
	// Why says what the example (and those after it) stands for.
	Why string `json:"why,omitempty"`
}

// examplesJSON holds the examples as data, one entry a URL.
//
//go:embed examples.json
var examplesJSON []byte

func examples() (accepted, refused []Example) {
	var file struct {
		Accepted, Refused []Example
	}
	if err := json.Unmarshal(examplesJSON, &file); err != nil {
		panic("slides: examples.json: " + err.Error())
	}
	return file.Accepted, file.Refused
}

// AcceptedExamples are URLs people copy, each with its canonical URL, and
// one at the length limit, counted in characters.
func AcceptedExamples() []Example {
	accepted, _ := examples()
	const sd = "https://speakerdeck.com/jnunemaker/atom"
	return append(accepted, Example{URL: sd + "?" + strings.Repeat("é", MaxURLLength-len(sd+"?")), Canonical: sd})
}

// RefusedExamples are URLs that are not one presentation, each with a part
// of the reason Parse gives, and one past the length limit.
func RefusedExamples() []Example {
	_, refused := examples()
	return append(refused, Example{URL: "https://speakerdeck.com/" + strings.Repeat("a", MaxURLLength), Reason: "longer than 2048"})
}

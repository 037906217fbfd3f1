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

package slidestock

import (
	"testing"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/upstream/slides"
)

// The slides package knows no API type: the controller converts its
// providers to status.provider's enum, which must hold the same words.
func TestTheParserProvidersAreTheAPIEnum(t *testing.T) {
	for got, want := range map[slides.Provider]v1alpha1.SlideProvider{
		slides.SpeakerDeck: v1alpha1.ProviderSpeakerDeck, slides.Docswell: v1alpha1.ProviderDocswell, slides.GoogleSlides: v1alpha1.ProviderGoogleSlides,
	} {
		if v1alpha1.SlideProvider(got) != want {
			t.Errorf("slides.%s converts to %q, the API's enum is %q", got, v1alpha1.SlideProvider(got), want)
		}
	}
}

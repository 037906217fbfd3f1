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

package scenario

import (
	"cmp"
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// DeckURL is a deck the sandbox knows (Docswell's).
const DeckURL = "https://www.docswell.com/s/takai/59VDWM-windows-server-2025"

// demoSlides are stocked beside the sample (SpeakerDeck's "atom"); the
// sandbox knows each of them except the last.
var demoSlides = []struct{ name, url string }{
	{"docswell-deck", DeckURL},
	{"google-deck", "https://docs.google.com/presentation/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit?usp=sharing"},
	{"missing-deck", "https://speakerdeck.com/jnunemaker/no-such-deck"},
}

// slides creates the demo's SlideStocks and waits until every stock in the
// namespace is Ready or Failed, as expected.
func (d *Demo) slides(ctx context.Context) error {
	for _, s := range demoSlides {
		obj := &v1alpha1.SlideStock{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: Namespace}}
		obj.Spec.URL = s.url
		if err := d.C.Create(ctx, obj); err != nil {
			return fmt.Errorf("create SlideStock %s: %w", s.name, err)
		}
	}
	want := map[string]v1alpha1.SlidePhase{"atom": v1alpha1.SlideReady, "docswell-deck": v1alpha1.SlideReady,
		"google-deck": v1alpha1.SlideReady, "missing-deck": v1alpha1.SlideFailed}
	var stocks []v1alpha1.SlideStock
	if err := poll.Until(ctx, "SlideStocks settled", 200*time.Millisecond, 60*time.Second, func() (bool, error) {
		var list v1alpha1.SlideStockList
		if err := d.C.List(ctx, &list, client.InNamespace(Namespace)); err != nil {
			return false, poll.Stop(err)
		}
		done := 0
		for _, s := range list.Items {
			if s.Status.Phase == v1alpha1.SlideReady || s.Status.Phase == v1alpha1.SlideFailed {
				done++
			}
		}
		stocks = list.Items
		return done == len(want) && len(list.Items) == len(want), fmt.Errorf("%d of %d", done, len(want))
	}); err != nil {
		return err
	}
	for _, s := range stocks {
		if s.Status.Phase != want[s.Name] {
			return fmt.Errorf("SlideStock %s is %s (%s), want %s", s.Name, s.Status.Phase, s.Status.LastError, want[s.Name])
		}
		fmt.Printf("    %-14s %-7s %-13s %-40q %s\n", s.Name, s.Status.Phase, s.Status.Provider, s.Status.Title, cmp.Or(s.Status.EmbedURL, s.Status.LastError))
	}
	return nil
}

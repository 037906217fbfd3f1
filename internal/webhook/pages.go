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

package webhook

import (
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchboard-dev/switchboard/internal/pages"
)

// The HTML pages the OAuth, sign-in and share-link routes answer a
// person's browser with (seed 000 §7.3: OAuth errors are HTML pages, not
// JSON), each written by package pages in the reader's language.

// kubectlGet is the platform team's line that follows a resource.
func kubectlGet(kind string, key types.NamespacedName) string {
	return fmt.Sprintf("kubectl get %s -n %s %s", kind, key.Namespace, key.Name)
}

// genericSuccess is the success page of a kind without one of its own.
func genericSuccess(w http.ResponseWriter, r *http.Request, kind string, key types.NamespacedName) error {
	return showPage(w, r, pages.Page{Status: http.StatusOK, Mark: pages.Done, Title: pages.Say(pages.ConnectedTitle),
		Lines: []pages.Line{pages.Say(pages.ConnectedLine), pages.Say(pages.CloseThisPage)},
		Admin: []string{kubectlGet(kind, key)}}, nil)
}

// refusal is a page that refuses: its status, title and lines.
func refusal(status int, title pages.Text, lines ...pages.Line) pages.Page {
	return pages.Page{Status: status, Mark: pages.Refused, Title: pages.Say(title), Lines: lines}
}

// retrying is a refusal the page retries by itself after wait (a 503 or
// 429 whose request, sent again, may pass).
func retrying(status int, wait int, title pages.Text, lines ...pages.Line) pages.Page {
	p := refusal(status, title, lines...)
	p.Mark, p.RetryIn = pages.Wait, wait
	return p
}

// showPage answers a person's browser with p, logging cause (never shown)
// of a server-side failure. Every 503 carries Retry-After, as every 503
// of the webhook does, whether or not the page retries by itself.
func showPage(w http.ResponseWriter, r *http.Request, p pages.Page, cause error) error {
	if cause != nil {
		logr.FromContextOrDiscard(r.Context()).Error(cause, "a person's page answered an error", "status", p.Status)
	}
	if p.Status == http.StatusServiceUnavailable && p.RetryIn <= 0 {
		w.Header().Set("Retry-After", retryAfterHeader(DefaultRetryAfter))
	}
	return pages.Write(w, r, p)
}

// privatePage keeps a redirect's URL (which carries the connect token, or
// a code and state) out of caches and out of the Referer header.
func privatePage(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

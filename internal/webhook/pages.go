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
	"html/template"
	"net/http"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
)

// The HTML pages the OAuth and sign-in routes answer a person's browser
// with (seed 000 §7.3: OAuth errors are HTML pages, not JSON).

// successInfo is what every success page may show.
type successInfo struct {
	Kind, Namespace, Name string
	// KubectlGet shows the resource's status.
	KubectlGet string
}

func successVars(kind string, key types.NamespacedName) successInfo {
	return successInfo{Kind: kind, Namespace: key.Namespace, Name: key.Name,
		KubectlGet: fmt.Sprintf("kubectl get %s -n %s %s", kind, key.Namespace, key.Name)}
}

var genericSuccess = template.Must(template.New("success").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Connected</title></head>
<body>
<h1>✅ Connected</h1>
<p>The grant for {{.Kind}} {{.Namespace}}/{{.Name}} is saved; its controller takes it from here.</p>
<p>Follow it with <code>{{.KubectlGet}}</code>.</p>
</body></html>
`))

// htmlPage answers a person's browser with a page that is not an error.
func htmlPage(w http.ResponseWriter, status int, title, message string) error {
	privatePage(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	return infoPage.Execute(w, map[string]any{"Title": title, "Message": message})
}

var infoPage = template.Must(template.New("info").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p></body></html>
`))

// htmlError answers a person's browser (seed 000 §7.3: OAuth errors are
// HTML pages). It returns nil: the answer is written.
func htmlError(w http.ResponseWriter, status int, title, message string) error {
	return htmlErrorCause(w, nil, status, title, message, nil)
}

// htmlErrorCause is htmlError that logs the cause of a server-side failure
// (never shown to the browser). A 503 carries Retry-After, as every 503 of
// the webhook does.
func htmlErrorCause(w http.ResponseWriter, r *http.Request, status int, title, message string, cause error) error {
	if r != nil && cause != nil {
		logr.FromContextOrDiscard(r.Context()).Error(cause, "OAuth route failed", "status", status)
	}
	privatePage(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterHeader(DefaultRetryAfter))
	}
	w.WriteHeader(status)
	return errorPage.Execute(w, map[string]any{"Title": title, "Message": message, "Status": status})
}

// privatePage keeps an OAuth page out of caches and its URL (which carries
// the connect token, or a code and state) out of the Referer header of any
// link the page shows.
func privatePage(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
}

var errorPage = template.Must(template.New("error").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p><p><small>HTTP {{.Status}}</small></p></body></html>
`))

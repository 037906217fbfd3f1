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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/hack/internal/poll"
)

// The OAuth connect flow every integration of the walk takes (Notion,
// Calendar, Sheets), as a person would: read the one-use connect link the
// manager keeps in a Secret, and follow it in a browser through the
// sandbox's consent page to the webhook's callback.

// browser follows no redirect by itself: the walk shows each one.
var browser = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// connectLink waits for the connect Secret the manager mints for the
// resource name (OAuth target target) and returns its link.
func (d *Demo) connectLink(ctx context.Context, webhookURL, target, name string) (string, error) {
	var link string
	what := fmt.Sprintf("the connect link in Secret %s/%s-oauth-connect", Namespace, name)
	err := poll.Until(ctx, what, 200*time.Millisecond, 60*time.Second, func() (bool, error) {
		var sec corev1.Secret
		err := d.C.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name + "-oauth-connect"}, &sec)
		if u := string(sec.Data["url"]); err == nil && strings.HasPrefix(u, webhookURL+"/oauth/"+target+"/connect?") {
			link = u
			return true, nil
		}
		return false, err
	})
	return link, err
}

// readLink is connectLink, shown as the kubectl command a person would
// read the link with.
func (d *Demo) readLink(ctx context.Context, webhookURL, target, name string) (string, error) {
	link, err := d.connectLink(ctx, webhookURL, target, name)
	if err != nil {
		return "", err
	}
	fmt.Printf("    kubectl get secret -n %s %s-oauth-connect -o jsonpath='{.data.url}' | base64 -d\n", Namespace, name)
	return link, nil
}

// follow opens link in the browser and follows at most 3 redirects (each
// one shown when show is set), asking for pages in lang when it is set
// (a person's browser: Accept text/html and Accept-Language). It returns
// the first answer that is not a redirect, its status and body; reached is
// false when every answer was a redirect.
func follow(link string, show bool, lang string) (code int, body []byte, reached bool, err error) {
	next := link
	for hop := 0; hop < 3; hop++ {
		req, err := http.NewRequest(http.MethodGet, next, nil)
		if err != nil {
			return 0, nil, false, err
		}
		if lang != "" {
			req.Header.Set("Accept", "text/html")
			req.Header.Set("Accept-Language", lang)
		}
		resp, err := browser.Do(req)
		if err != nil {
			return 0, nil, false, err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			return resp.StatusCode, body, true, nil
		}
		next = resp.Header.Get("Location")
		if show {
			fmt.Printf("    %d → %s\n", resp.StatusCode, strings.SplitN(next, "?", 2)[0])
		}
	}
	return 0, nil, false, nil
}

// browse reads the one-use connect link of target/name and follows it
// through the sandbox's consent page to the webhook's callback, which
// writes the grant into the Secret tokenSecret.
func (d *Demo) browse(ctx context.Context, webhookURL, target, name, tokenSecret string) error {
	link, err := d.readLink(ctx, webhookURL, target, name)
	if err != nil {
		return err
	}
	code, body, reached, err := follow(link, true, "")
	switch {
	case err != nil:
		return err
	case !reached:
		return errors.New("the OAuth flow did not reach the callback in 3 hops")
	case code != http.StatusOK || !bytes.Contains(body, []byte("Connected")):
		return fmt.Errorf("OAuth callback answered %d: %s", code, body)
	}
	fmt.Printf("    callback answered 200 \"Connected\": Secret %s/%s now holds the grant\n", Namespace, tokenSecret)
	return nil
}

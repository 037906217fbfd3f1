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
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// The walk's first steps: a Google grant through the sandbox's consent,
// the Secrets the samples name, and the samples applied.

// googleConsent runs the authorization-code flow against the sandbox's
// Google OAuth emulator, as a person's browser would, and returns the
// refresh token.
func googleConsent(sandboxURL, webhookURL string) (string, error) {
	redirect := webhookURL + "/google/oauth/callback"
	q := url.Values{"client_id": {"demo-client"}, "redirect_uri": {redirect}, "response_type": {"code"},
		"scope":       {"https://www.googleapis.com/auth/calendar https://www.googleapis.com/auth/spreadsheets"},
		"access_type": {"offline"}, "state": {"demo"}}
	resp, err := browser.Get(sandboxURL + "/googleaccounts/o/oauth2/v2/auth?" + q.Encode())
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("consent answered %d without a code", resp.StatusCode)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "redirect_uri": {redirect}}
	req, _ := http.NewRequest("POST", sandboxURL+"/googleoauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("demo-client", "demo-secret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var tok struct {
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		return "", fmt.Errorf("token exchange answered %d: %w", resp.StatusCode, err)
	}
	if tok.RefreshToken == "" {
		return "", fmt.Errorf("token exchange answered %d without a refresh token", resp.StatusCode)
	}
	fmt.Println("    got a refresh token (kept in Secret demo/google-token, never printed)")
	return tok.RefreshToken, nil
}

func (d *Demo) secrets(ctx context.Context, googleRefresh string) error {
	secrets := map[string]map[string]string{
		"notion-client":    {"client_id": "demo-notion-client", "client_secret": "demo-notion-secret"},
		"notion-webhook":   {"token": "demo-webhook-token-0123456789abcdef"},
		"google-client":    {"client_id": "demo-client", "client_secret": "demo-secret"},
		"google-token":     {"refresh_token": googleRefresh},
		"blob-credentials": {blob.KeyAccessKeyID: d.S3.Credentials.AccessKeyID, blob.KeySecretAccessKey: d.S3.Credentials.SecretAccessKey},
	}
	for _, k := range kits {
		maps.Copy(secrets, k.secrets(d))
	}
	names := make([]string, 0, len(secrets))
	for name := range secrets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace}, StringData: secrets[name]}
		if err := d.C.Create(ctx, s); err != nil {
			return fmt.Errorf("create Secret %s: %w", name, err)
		}
	}
	fmt.Printf("    %s\n", strings.Join(names, ", "))
	return nil
}

func (d *Demo) applySamples(ctx context.Context) error {
	samples, err := readSamples()
	if err != nil {
		return err
	}
	for _, u := range samples {
		switch {
		case u.GetKind() == "NotionIntegration" && !d.Previous:
			// A platform team's hand-made integration, connected by a
			// link it hands over; the walk's researcher signs up instead.
			fmt.Printf("    %s/%s skipped: the researcher signs up through notionsignup/%s instead\n", strings.ToLower(u.GetKind()), u.GetName(), NotionSignupName)
			continue
		case d.Previous && !d.serves(u):
			fmt.Printf("    %s/%s skipped: the release walked predates the kind\n", strings.ToLower(u.GetKind()), u.GetName())
			continue
		case u.GetKind() == "PaperSync":
			// Its pageID is a placeholder: it is applied once the
			// integration's database holds a page it can name.
			d.paperSample = u
			continue
		}
		if err := d.C.Create(ctx, u); err != nil {
			return fmt.Errorf("apply the %s sample: %w", u.GetKind(), err)
		}
		fmt.Printf("    %s/%s created\n", strings.ToLower(u.GetKind()), u.GetName())
	}
	return nil
}

// serves reports whether the cluster serves u's kind: the previous
// release walked on an upgrade predates the kinds added since.
func (d *Demo) serves(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	_, err := d.C.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// ApplySample applies the sample of kind, as applySamples would have,
// changed first by change when it is set.
func (d *Demo) ApplySample(ctx context.Context, kind string, change func(*unstructured.Unstructured) error) error {
	samples, err := readSamples()
	if err != nil {
		return err
	}
	for _, u := range samples {
		if u.GetKind() == kind {
			if change != nil {
				if err := change(u); err != nil {
					return err
				}
			}
			if err := d.C.Create(ctx, u); err != nil {
				return fmt.Errorf("apply the %s sample: %w", kind, err)
			}
			fmt.Printf("    %s/%s created\n", strings.ToLower(kind), u.GetName())
			return nil
		}
	}
	return fmt.Errorf("config/samples has no %s", kind)
}

// readSamples reads config/samples' objects, each in the walk's namespace.
func readSamples() ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join("config", "samples", "switchboard_*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		u.SetNamespace(Namespace)
		out = append(out, u)
	}
	return out, nil
}

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

package upstream

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestDefaultsAreTheRealEndpoints(t *testing.T) {
	s := NewSet()
	for name, want := range map[Name]string{
		Notion: "https://api.notion.com", Arxiv: "https://export.arxiv.org",
		SpeakerDeck: "https://speakerdeck.com", Docswell: "https://www.docswell.com",
		GoogleSlides: "https://docs.google.com", GoogleOAuth: "https://oauth2.googleapis.com",
		GoogleAPIs: "https://www.googleapis.com", S3: "https://s3.amazonaws.com", Discord: "https://discord.com",
	} {
		if got := s.URL(name).String(); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	if !slices.Contains(s.Hosts(), "sheets.googleapis.com:443") {
		t.Errorf("default hosts %v lack sheets.googleapis.com", s.Hosts())
	}
}

func TestFlagParsing(t *testing.T) {
	for _, tc := range []struct {
		name, value, wantErr string
	}{
		{"accepts a sandbox URL and drops the trailing slash", "notion=http://127.0.0.1:9090/notion/", ""},
		{"refuses an unknown name", "slack=https://slack.com", `unknown upstream "slack"`},
		{"refuses a value without =", "notion", "want NAME=URL"},
		{"refuses a relative URL", "arxiv=/api", "not an absolute http(s) URL"},
		{"refuses another scheme", "s3=ftp://storage", "not an absolute http(s) URL"},
		{"refuses a query", "docswell=https://www.docswell.com?x=1", "must not carry a query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			s := NewSet()
			fs.Var(s, "upstream", "")
			err := fs.Parse([]string{"--upstream", tc.value})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := s.URL(Notion).String(); got != "http://127.0.0.1:9090/notion" {
					t.Fatalf("notion = %s", got)
				}
				if got := s.Endpoint(Notion, "/v1/search"); got != "http://127.0.0.1:9090/notion/v1/search" {
					t.Fatalf("endpoint = %s", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestOverridingGoogleAPIsDropsTheDefaultSheetsHost(t *testing.T) {
	s := NewSet()
	if err := s.Set("googleapis=http://127.0.0.1:9090/googleapis"); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(s.Hosts(), "sheets.googleapis.com:443") {
		t.Fatalf("hosts %v still allow the real Sheets host", s.Hosts())
	}
}

func TestTransportRefusesOtherHostsAndOffHostRedirects(t *testing.T) {
	calls := 0
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://elsewhere.invalid/steal", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer allowed.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a request reached a host that is not an upstream")
	}))
	defer other.Close()

	s := NewSet()
	if err := s.Set("arxiv=" + allowed.URL); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: s.Transport(nil), CheckRedirect: s.CheckRedirect}

	resp, err := c.Get(allowed.URL + "/api/query")
	if err != nil {
		t.Fatalf("allowed host refused: %v", err)
	}
	_ = resp.Body.Close()

	// httptest servers share 127.0.0.1, so the port tells them apart.
	if _, err := c.Get(other.URL); !errors.Is(err, ErrHostNotAllowed) {
		t.Fatalf("other host: got %v, want ErrHostNotAllowed", err)
	}
	if _, err := c.Get(allowed.URL + "/away"); !errors.Is(err, ErrHostNotAllowed) {
		t.Fatalf("off-host redirect: got %v, want ErrHostNotAllowed", err)
	}
	if calls != 2 {
		t.Fatalf("allowed server saw %d calls, want 2", calls)
	}
	if s.Allows(&url.URL{Scheme: "https", Host: "api.notion.com"}) != true {
		t.Fatal("default Notion host not allowed")
	}
}

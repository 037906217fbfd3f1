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
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
)

// FuzzInboundRequests throws arbitrary methods, paths, content types and
// bodies at the server: it must never answer 5xx to what a client sent, and
// every error must be in the common format.
func FuzzInboundRequests(f *testing.F) {
	f.Add("POST", "/test/echo", "application/json", []byte(`{"a":1}`))
	f.Add("POST", "/test/echo", "application/json", []byte(`{"a":`))
	f.Add("POST", "/test/echo", "text/plain", []byte("hello"))
	f.Add("GET", "/nowhere", "", []byte(nil))
	f.Add("PUT", "/test/echo", "application/json; charset=utf-8", []byte(`[]`))
	f.Add("POST", "/test/echo", "application/json", bytes.Repeat([]byte("["), 4096))

	s, err := NewServer(Options{Log: logr.Discard(), MaxBodyBytes: 1 << 16}, Deps{}, Family{Name: "fuzz", Routes: func(d Deps) []Route {
		return testFamily.Routes(d)[:1] // only the echo route: the others fail on purpose
	}})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, method, path, contentType string, body []byte) {
		if !validMethod(method) || len(path) == 0 || path[0] != '/' {
			return
		}
		req, err := http.NewRequest(method, "http://x"+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.RemoteAddr = "192.0.2.1:1234"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q (%q, %d bytes) answered %d: %s", method, path, contentType, len(body), rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e errorAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%d answer is not the common error format: %q", rec.Code, rec.Body)
			}
		}
	})
}

func validMethod(m string) bool {
	switch m {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
		return true
	}
	return false
}

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
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// raw sends request bytes as they are (no client would send these) to
// the server at base and reads the answer.
func raw(t *testing.T, base, request string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write([]byte(request)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestErrorsTheHTTPServerAnswersItselfUseTheCommonFormat: requests
// net/http refuses before any handler runs are answered in the common
// error format too, with the headers of every other error.
func TestErrorsTheHTTPServerAnswersItselfUseTheCommonFormat(t *testing.T) {
	base := start(t, Options{})
	for _, c := range []struct {
		what, request string
		status        int
		code          string
	}{
		{"an undecodable path", "GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusBadRequest, CodeInvalidRequest},
		{"a malformed request line", "GET\r\nHost: x\r\n\r\n", http.StatusBadRequest, CodeInvalidRequest},
		{"no Host header", "GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest, CodeInvalidRequest},
		{"headers over the limit", "GET /test/echo HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", DefaultMaxHeaderBytes+8192) + "\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge, CodeRequestHeadersTooLarge},
		{"an unknown transfer coding", "POST /test/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", http.StatusNotImplemented, CodeNotImplemented},
	} {
		t.Run(c.what, func(t *testing.T) {
			resp := raw(t, base, c.request)
			if resp.StatusCode != c.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, c.status)
			}
			for h, want := range map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
				if got := resp.Header.Get(h); got != want {
					t.Errorf("%s = %q, want %q", h, got, want)
				}
			}
			e := decodeError(t, resp)
			if e.Error.Code != c.code || e.Error.Message == "" || e.Error.Details == nil {
				t.Errorf("error = %+v, want code %s with a message and details", e.Error, c.code)
			}
		})
	}
	// A handler's own answers pass through untouched, on a connection
	// that is kept alive.
	resp := raw(t, base, "GET /test/conflict HTTP/1.1\r\nHost: x\r\n\r\n")
	if e := decodeError(t, resp); resp.StatusCode != http.StatusConflict || e.Error.Code != CodeConflict || e.Error.Details["phase"] != "Error" {
		t.Errorf("a handler's 409 = %d %+v", resp.StatusCode, e.Error)
	}
}

// TestOnlyTheHTTPServersOwnAnswerIsRewritten: bytes that merely start like
// an error answer, as a handler's body or headers could, pass unchanged.
func TestOnlyTheHTTPServersOwnAnswerIsRewritten(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\n\r\n",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request\r\nmore",
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}",
		"400 Bad Request",
	} {
		if _, ok := formatServerError([]byte(p)); ok {
			t.Errorf("rewrote %q", p)
		}
	}
}

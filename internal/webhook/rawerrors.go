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
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
)

// Some requests never reach a handler: net/http answers them itself while
// reading the request — headers over MaxHeaderBytes (431), a request line
// or header it cannot parse, such as an undecodable path "/%zz" (400), a
// transfer coding it does not know (501). It writes those answers straight
// to the connection as plain text (net/http server.go, conn.serve), and
// http.Server has no hook for them. So the public listener wraps each
// connection and rewrites exactly that write into the common error format
// (seed 000 §6.3), with the headers every other error carries.

// serverErrorAnswer matches the answer net/http writes before a handler
// runs: the status line, then Content-Type and Connection in that order,
// no other header, and the status text as the body. A handler's answer
// never looks like this: net/http writes a handler's headers sorted
// (Connection before Content-Type) and adds Date.
var serverErrorAnswer = regexp.MustCompile(`\AHTTP/1\.1 ([0-9]{3}) [^\r\n]*\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n([^\r\n]*)\z`)

// serverErrorMessages say in words what each status net/http answers on
// its own means for a caller.
var serverErrorMessages = map[int]string{
	http.StatusBadRequest:                  "the request could not be parsed (a malformed request line, path or header)",
	http.StatusRequestHeaderFieldsTooLarge: fmt.Sprintf("the request headers exceed %d bytes", DefaultMaxHeaderBytes),
	http.StatusNotImplemented:              "the request's transfer coding is not supported",
}

// formattedListener wraps the public listener's connections
// (formattedConn).
type formattedListener struct{ net.Listener }

func (l formattedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &formattedConn{Conn: c}, nil
}

// formattedConn rewrites net/http's own error answers (serverErrorAnswer)
// and passes every other write through unchanged.
type formattedConn struct{ net.Conn }

func (c *formattedConn) Write(p []byte) (int, error) {
	if out, ok := formatServerError(p); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite half-closes the connection as net/http does after a 431, so
// the client reads the answer before the connection closes.
func (c *formattedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// formatServerError turns one of net/http's plain-text error answers into
// the common error format; ok is false for any other bytes.
func formatServerError(p []byte) (_ []byte, ok bool) {
	m := serverErrorAnswer.FindSubmatch(p)
	if m == nil {
		return nil, false
	}
	status, _ := strconv.Atoi(string(m[1]))
	msg, known := serverErrorMessages[status]
	if !known {
		msg = string(m[2])
	}
	// The answer is WriteError's, headers and body, framed as net/http
	// frames a response on a connection it closes.
	rec := &recordedAnswer{header: http.Header{}}
	WriteError(rec, &Error{Status: status, Message: msg})
	resp := &http.Response{StatusCode: status, ProtoMajor: 1, ProtoMinor: 1, Header: rec.header,
		Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Close: true}
	var b bytes.Buffer
	if err := resp.Write(&b); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// recordedAnswer is an http.ResponseWriter that keeps what it is given.
type recordedAnswer struct {
	header http.Header
	body   bytes.Buffer
}

func (a *recordedAnswer) Header() http.Header         { return a.header }
func (a *recordedAnswer) Write(p []byte) (int, error) { return a.body.Write(p) }
func (a *recordedAnswer) WriteHeader(int)             {}

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

package blob_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// TestServerFailuresAreClassified covers the answers versitygw cannot be
// made to give: a server that throttles, fails or hangs. Each answer is an
// S3 error body as AWS documents it
// (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html);
// this tests the classification, not S3 itself.
func TestServerFailuresAreClassified(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		code       string
		retryAfter string
		wantClass  outbound.Class
		wantAfter  time.Duration
	}{
		{"retries SlowDown (503) after its Retry-After", http.StatusServiceUnavailable, "SlowDown", "7", outbound.Transient, 7 * time.Second},
		{"retries an InternalError (500)", http.StatusInternalServerError, "InternalError", "", outbound.Transient, 0},
		{"retries a 429", http.StatusTooManyRequests, "TooManyRequests", "", outbound.Transient, 0},
		{"retries RequestTimeout although it is a 400", http.StatusBadRequest, "RequestTimeout", "", outbound.Transient, 0},
		{"does not retry an InvalidBucketName (400)", http.StatusBadRequest, "InvalidBucketName", "", outbound.Permanent, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(tc.status)
				if r.Method != http.MethodHead {
					_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + tc.code + `</Code><Message>m</Message></Error>`))
				}
			}))
			defer srv.Close()
			c, _ := newClient(t, srv.URL, nil)
			err := c.Delete(context.Background(), blob.Object{Bucket: "b", Key: "k", Credentials: blob.Credentials{AccessKeyID: "a", SecretAccessKey: "s"}})
			e, ok := outbound.Classify(err)
			if !ok || e.Class != tc.wantClass || e.Status != tc.status || e.RetryAfter != tc.wantAfter {
				t.Fatalf("Delete = %v classified %+v, want %s with status %d, Retry-After %s", err, e, tc.wantClass, tc.status, tc.wantAfter)
			}
		})
	}
}

func TestNoAnswerIsTransient(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	obj := blob.Object{Bucket: "b", Key: "k", Credentials: blob.Credentials{AccessKeyID: "a", SecretAccessKey: "s"}}

	t.Run("a server that does not answer in time", func(t *testing.T) {
		c, _ := newClient(t, srv.URL, func(o *blob.Options) {
			hc := *o.HTTPClient
			hc.Timeout = 100 * time.Millisecond
			o.HTTPClient = &hc
		})
		if _, err := c.Head(context.Background(), obj); !outbound.IsTransient(err) {
			t.Fatalf("Head = %v, want transient", err)
		}
	})
	t.Run("a cancelled context", func(t *testing.T) {
		c, _ := newClient(t, srv.URL, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := c.Head(ctx, obj); !outbound.IsTransient(err) {
			t.Fatalf("Head = %v, want transient", err)
		}
	})
	t.Run("a refused connection", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		c, _ := newClient(t, closed.URL, nil)
		_, err := c.Head(context.Background(), obj)
		if !outbound.IsTransient(err) || errors.Is(err, blob.ErrNotFound) {
			t.Fatalf("Head = %v, want transient", err)
		}
	})
}

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
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/switchboard-dev/switchboard/internal/capability"
	"github.com/switchboard-dev/switchboard/internal/testenv"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// gw is a real S3 server (versitygw) shared by the package's tests; each
// test works under its own keys.
var gw *testenv.S3

const bucket = "blob-test"

func TestMain(m *testing.M) {
	s, err := testenv.StartS3()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gw = s
	if err := gw.CreateBucket(context.Background(), bucket); err != nil {
		fmt.Fprintln(os.Stderr, "create bucket:", err)
		_ = gw.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if err := gw.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop versitygw:", err)
	}
	os.Exit(code)
}

// recorder is the transport under the outbound policy: it keeps every
// request that left, so tests can see what the SDK sent.
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req.Clone(context.Background()))
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recorder) requests() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.reqs...)
}

// newClient is a blob.Client as the manager builds one: endpoint and HTTP
// client from an outbound policy whose s3 upstream is allowed (the server
// itself unless allowed says otherwise).
func newClient(t *testing.T, allowed string, change func(*blob.Options)) (*blob.Client, *recorder) {
	t.Helper()
	ups := upstream.NewSet()
	if err := ups.Set("s3=" + allowed); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	out, err := outbound.New(ups, outbound.Options{Transport: rec})
	if err != nil {
		t.Fatal(err)
	}
	o := blob.Options{Endpoint: out.Endpoint(upstream.S3, ""), HTTPClient: out.HTTPClient()}
	if change != nil {
		change(&o)
	}
	c, err := blob.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// object is a fresh key in the test bucket with the server's keys.
func object(t *testing.T) blob.Object {
	return gw.Object(bucket, "links/"+t.Name()+"/"+capability.Random(6)+".bin")
}

func put(t *testing.T, c *blob.Client, o blob.Object, body []byte) {
	t.Helper()
	if err := c.Put(context.Background(), o, body, "application/octet-stream"); err != nil {
		t.Fatalf("put %s: %v", o.Key, err)
	}
}

func TestHeadOfAMissingKeyIsErrNotFound(t *testing.T) {
	c, _ := newClient(t, gw.Endpoint, nil)
	_, err := c.Head(context.Background(), object(t))
	if !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Head = %v, want ErrNotFound", err)
	}
	if e, ok := outbound.Classify(err); !ok || e.Class != outbound.Permanent || e.Status != http.StatusNotFound || e.Upstream != upstream.S3 {
		t.Fatalf("classified as %+v, want a permanent s3 404", e)
	}
}

func TestPutThenHeadReportsSizeTypeAndTime(t *testing.T) {
	c, _ := newClient(t, gw.Endpoint, nil)
	o := object(t)
	body := []byte("the prize file\n")
	before := time.Now().Add(-time.Minute)
	if err := c.Put(context.Background(), o, body, "text/plain; charset=utf-8"); err != nil {
		t.Fatal(err)
	}
	info, err := c.Head(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(body)) || info.ContentType != "text/plain; charset=utf-8" {
		t.Fatalf("Head = %+v, want %d bytes of text/plain", info, len(body))
	}
	if info.LastModified.Before(before) || info.LastModified.After(time.Now().Add(time.Minute)) {
		t.Fatalf("LastModified %s is not about now", info.LastModified)
	}
}

func TestDeleteIsIdempotent(t *testing.T) {
	c, _ := newClient(t, gw.Endpoint, nil)
	ctx := context.Background()
	o := object(t)
	put(t, c, o, []byte("x"))
	for i := 1; i <= 2; i++ {
		if err := c.Delete(ctx, o); err != nil {
			t.Fatalf("delete #%d: %v", i, err)
		}
	}
	if _, err := c.Head(ctx, o); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Head after delete = %v, want ErrNotFound", err)
	}
	if err := c.Delete(ctx, object(t)); err != nil {
		t.Fatalf("delete of a key that never existed: %v", err)
	}
	if err := c.Delete(ctx, gw.Object("no-such-bucket", "a")); err != nil {
		t.Fatalf("delete in a bucket that does not exist: %v", err)
	}
}

func TestCreateBucketTwiceIsFine(t *testing.T) {
	c, _ := newClient(t, gw.Endpoint, nil)
	for i := 1; i <= 2; i++ {
		if err := c.CreateBucket(context.Background(), "blob-test-twice", "", gw.Credentials); err != nil {
			t.Fatalf("create #%d: %v", i, err)
		}
	}
}

// get downloads u with a plain client, as a receiver's browser would.
func get(t *testing.T, u string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(u) //nolint:noctx // a test download
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// s3Code is the <Code> of an S3 error body.
func s3Code(body []byte) string {
	_, rest, ok := strings.Cut(string(body), "<Code>")
	code, _, _ := strings.Cut(rest, "</Code>")
	if !ok {
		return ""
	}
	return code
}

func TestPresignedGetDownloadsTheBytesUnderTheFileName(t *testing.T) {
	// The public endpoint names the server by another host than the
	// in-cluster one; the signature covers the host, so a download that
	// works proves the URL was signed for the public name.
	public := strings.Replace(gw.Endpoint, "127.0.0.1", "localhost", 1)
	c, _ := newClient(t, gw.Endpoint, func(o *blob.Options) { o.PublicEndpoint = public })
	o := object(t)
	body := bytes.Repeat([]byte{0, 1, 2, 0xff}, 4096)
	put(t, c, o, body)
	name := "受け取り 資料 (final) \"v2\".pdf"

	u, err := c.PresignGet(context.Background(), o, time.Minute, name)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := url.Parse(public); parsed.Host != want.Host {
		t.Fatalf("URL host %s, want the public %s", parsed.Host, want.Host)
	}
	q := parsed.Query()
	if q.Get("X-Amz-SignedHeaders") != "host" || q.Get("X-Amz-Expires") != "60" {
		t.Fatalf("signed headers %q, expires %q; want only host, 60", q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Expires"))
	}
	for k := range q {
		if strings.Contains(strings.ToLower(k), "checksum") {
			t.Fatalf("presigned URL carries %s", k)
		}
	}

	resp, got := get(t, u)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
		t.Fatalf("GET = %d with %d bytes, want 200 with the %d stored", resp.StatusCode, len(got), len(body))
	}
	disp, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	if err != nil || disp != "attachment" || params["filename"] != name {
		t.Fatalf("Content-Disposition %q parses to %q %q (%v), want an attachment named %q",
			resp.Header.Get("Content-Disposition"), disp, params["filename"], err, name)
	}
}

func TestPresignedURLIsRefusedPastItsExpiry(t *testing.T) {
	ctx := context.Background()
	// The same client signs the URLs; only the signing clock differs, so a
	// refusal is the expiry and nothing else.
	var signedAt time.Time
	c, _ := newClient(t, gw.Endpoint, func(o *blob.Options) { o.Now = func() time.Time { return signedAt } })
	o := object(t)
	put(t, c, o, []byte("soon gone"))

	for _, tc := range []struct {
		name string
		age  time.Duration
		want int
	}{
		{"a minute's URL signed 40 seconds ago downloads", 40 * time.Second, http.StatusOK},
		{"a minute's URL signed 80 seconds ago is refused", 80 * time.Second, http.StatusForbidden},
		{"a minute's URL signed an hour ago is refused", time.Hour, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			signedAt = time.Now().Add(-tc.age)
			u, err := c.PresignGet(ctx, o, time.Minute, "f.txt")
			if err != nil {
				t.Fatal(err)
			}
			resp, body := get(t, u)
			if resp.StatusCode != tc.want {
				t.Fatalf("GET = %d %s, want %d", resp.StatusCode, body, tc.want)
			}
			if tc.want == http.StatusForbidden && s3Code(body) != "AccessDenied" {
				t.Fatalf("refusal code %q (%s), want AccessDenied", s3Code(body), body)
			}
		})
	}
}

func TestTamperedPresignedURLIsRefused(t *testing.T) {
	c, _ := newClient(t, gw.Endpoint, nil)
	o, other := object(t), object(t)
	put(t, c, o, []byte("mine"))
	put(t, c, other, []byte("someone else's"))
	u, err := c.PresignGet(context.Background(), o, time.Minute, "mine.txt")
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := get(t, u); resp.StatusCode != http.StatusOK {
		t.Fatalf("the untouched URL answers %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		name   string
		tamper func(*url.URL)
	}{
		{"another key", func(p *url.URL) { p.Path = "/" + bucket + "/" + other.Key }},
		{"a changed signature", func(p *url.URL) {
			q := p.Query()
			sig := []byte(q.Get("X-Amz-Signature"))
			sig[0] ^= 1
			q.Set("X-Amz-Signature", string(sig))
			p.RawQuery = q.Encode()
		}},
		{"a longer expiry", func(p *url.URL) { setQuery(p, "X-Amz-Expires", "604800") }},
		{"another file name", func(p *url.URL) { setQuery(p, "response-content-disposition", "inline") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			tc.tamper(p)
			resp, body := get(t, p.String())
			if resp.StatusCode != http.StatusForbidden || s3Code(body) != "SignatureDoesNotMatch" {
				t.Fatalf("GET = %d %s, want 403 SignatureDoesNotMatch", resp.StatusCode, body)
			}
		})
	}
}

func setQuery(p *url.URL, k, v string) {
	q := p.Query()
	q.Set(k, v)
	p.RawQuery = q.Encode()
}

func TestWrongCredentialsAreErrForbidden(t *testing.T) {
	c, _ := newClient(t, gw.Endpoint, nil)
	ctx := context.Background()
	o := object(t)
	put(t, c, o, []byte("x"))
	for _, tc := range []struct {
		name  string
		creds blob.Credentials
	}{
		{"a wrong secret", blob.Credentials{AccessKeyID: gw.Credentials.AccessKeyID, SecretAccessKey: capability.Random(30)}},
		{"an unknown access key", blob.Credentials{AccessKeyID: capability.Random(15), SecretAccessKey: gw.Credentials.SecretAccessKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrong := o
			wrong.Credentials = tc.creds
			_, headErr := c.Head(ctx, wrong)
			putErr := c.Put(ctx, wrong, []byte("y"), "")
			delErr := c.Delete(ctx, wrong)
			for op, err := range map[string]error{"Head": headErr, "Put": putErr, "Delete": delErr} {
				if !errors.Is(err, blob.ErrForbidden) || !outbound.IsPermanent(err) {
					t.Errorf("%s = %v, want a permanent ErrForbidden", op, err)
				}
				if err != nil && strings.Contains(err.Error(), tc.creds.SecretAccessKey) {
					t.Errorf("%s's error shows the secret", op)
				}
			}
		})
	}
	if info, err := c.Head(ctx, o); err != nil || info.Size != 1 {
		t.Fatalf("the object after refused writes: %+v, %v", info, err)
	}
}

func TestAnEndpointOffTheAllowlistIsRefusedBeforeSending(t *testing.T) {
	// The policy allows another host; the client is pointed at the server
	// anyway, as a misconfigured or tampered endpoint would be.
	c, rec := newClient(t, "http://s3.internal.example:7070", func(o *blob.Options) { o.Endpoint = gw.Endpoint })
	_, err := c.Head(context.Background(), gw.Object(bucket, "any"))
	if !errors.Is(err, upstream.ErrHostNotAllowed) || !outbound.IsPermanent(err) {
		t.Fatalf("Head = %v, want a permanent ErrHostNotAllowed", err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("%d requests left the policy", n)
	}
}

// TestChecksumsOnlyWhenRequired shows the setting matters: the SDK's
// default adds CRC32 checksum headers to an upload (the headers that break
// many S3-compatible servers); the blob client sends none, and downloads
// without asking for one.
func TestChecksumsOnlyWhenRequired(t *testing.T) {
	ctx := context.Background()
	c, rec := newClient(t, gw.Endpoint, nil)
	o := object(t)
	put(t, c, o, []byte("no checksum please"))
	u, err := c.PresignGet(ctx, o, time.Minute, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Head(ctx, o); err != nil {
		t.Fatal(err)
	}
	if len(rec.requests()) != 2 {
		t.Fatalf("%d requests sent, want the PUT and the HEAD (presigning sends nothing)", len(rec.requests()))
	}
	for _, req := range rec.requests() {
		if h := checksumHeaders(req); len(h) > 0 {
			t.Errorf("%s sent %v", req.Method, h)
		}
	}
	if parsed, err := url.Parse(u); err != nil || parsed.Query().Get("X-Amz-SignedHeaders") != "host" {
		t.Errorf("presigned URL signs more than the host: %s (%v)", u, err)
	}

	// The SDK's default (what config.LoadDefaultConfig sets), on the same
	// server and transport.
	def := &recorder{}
	sdk := s3.New(s3.Options{
		BaseEndpoint: aws.String(gw.Endpoint), UsePathStyle: true, Region: gw.Region,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: gw.Credentials.AccessKeyID, SecretAccessKey: gw.Credentials.SecretAccessKey}, nil
		}),
		HTTPClient: &http.Client{Transport: def},
	})
	_, err = sdk.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(o.Key + ".default"), Body: strings.NewReader("x")})
	if reqs := def.requests(); len(reqs) == 0 || len(checksumHeaders(reqs[0])) == 0 {
		for _, r := range reqs {
			t.Logf("%s %s %v", r.Method, r.URL, r.Header)
		}
		t.Fatalf("the SDK's default sent no checksum header (put: %v): the test no longer shows the setting matters", err)
	}
}

func checksumHeaders(req *http.Request) []string {
	var found []string
	for k, v := range req.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-checksum") || strings.HasPrefix(lk, "x-amz-sdk-checksum") || lk == "x-amz-trailer" ||
			lk == "content-encoding" && strings.Contains(strings.Join(v, ","), "aws-chunked") {
			found = append(found, k)
		}
	}
	return found
}

func TestPresignTTLIsBounded(t *testing.T) {
	c, _ := newClient(t, gw.Endpoint, nil)
	for _, ttl := range []time.Duration{0, 999 * time.Millisecond, blob.MaxPresignTTL + time.Second} {
		if _, err := c.PresignGet(context.Background(), object(t), ttl, ""); err == nil {
			t.Errorf("ttl %s accepted", ttl)
		}
	}
}

func TestCredentialsNeverPrintTheSecret(t *testing.T) {
	o := gw.Object(bucket, "k")
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(format, o); strings.Contains(s, gw.Credentials.SecretAccessKey) {
			t.Errorf("%s shows the secret: %s", format, s)
		}
	}
}

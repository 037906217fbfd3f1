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

// Package blob is the operator's S3 client: HEAD, DELETE and presigned
// GETs of one object in an S3-compatible bucket, each call signed with the
// credentials its ReceiveLink names. Every request goes through the
// outbound policy's http.Client (the host allowlist of `--upstream s3`),
// and every failure is an *outbound.Error, transient or permanent, so
// controllers retry through the runner: the SDK's own retries are off. It
// knows no custom resource and reads no Secret: the ReceiveLink controller
// reads the credentials Secret and hands it Credentials.
package blob

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// DefaultRegion is the region of an object whose spec names none: the one
// every S3-compatible server accepts (versitygw, MinIO and Ceph default to
// it) and where AWS's global endpoint signs.
const DefaultRegion = "us-east-1"

// maxClients bounds the cache of SDK clients, one per (credentials,
// region). Links share a few credential Secrets in practice; the bound
// keeps a cluster with many, or with rotated keys, from growing it forever.
const maxClients = 256

// Credentials are an S3 access key pair. String never shows the secret,
// so a Credentials (or an Object holding one) printed with %v leaks nothing.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

func (c Credentials) String() string { return "access key " + c.AccessKeyID }

// GoString keeps the secret out of %#v as well.
func (c Credentials) GoString() string {
	return fmt.Sprintf("blob.Credentials{AccessKeyID: %q}", c.AccessKeyID)
}

// Object names one stored object and the credentials to reach it with.
type Object struct {
	Bucket string
	Key    string
	// Region signs the requests; DefaultRegion when empty.
	Region      string
	Credentials Credentials
}

func (o Object) region() string { return regionOr(o.Region) }

func regionOr(r string) string {
	if r == "" {
		return DefaultRegion
	}
	return r
}

// Info is what a HEAD tells about an object.
type Info struct {
	Size         int64
	ContentType  string
	LastModified time.Time
}

// Store is the part of object storage the controllers and the webhook use;
// their tests swap it for a fake.
type Store interface {
	// Head reports the object's size and type; ErrNotFound when it does
	// not exist.
	Head(ctx context.Context, o Object) (Info, error)
	// Delete removes the object; one already gone is success.
	Delete(ctx context.Context, o Object) error
	// PresignGet returns a URL on the public endpoint that downloads the
	// object as an attachment named filename for ttl.
	PresignGet(ctx context.Context, o Object, ttl time.Duration, filename string) (string, error)
}

var _ Store = (*Client)(nil)

// Options configure a Client.
type Options struct {
	// Endpoint is the S3 API's base URL as the operator reaches it: the
	// manager's `--upstream s3=URL` (outbound.Client.Endpoint(upstream.S3, "")).
	Endpoint string
	// PublicEndpoint is the base URL receivers' browsers reach, which
	// presigned URLs are built on; Endpoint when empty. In a cluster the
	// two differ (http://versitygw.storage.svc:7070 inside,
	// https://files.example.com outside); the signature covers the host, so
	// the URL must be signed for the public one.
	PublicEndpoint string
	// HTTPClient sends every request: the outbound policy's
	// (outbound.Client.HTTPClient()), so only configured upstreams are
	// reached. Required. When it has no Timeout, outbound.DefaultTimeout
	// applies.
	HTTPClient *http.Client
	// Now is the clock presigned URLs are signed with (time.Now when nil);
	// tests set it in the past to get an expired URL without sleeping.
	Now func() time.Time
}

// Client calls an S3-compatible API. It is safe for concurrent use.
type Client struct {
	endpoint, public string
	hc               *http.Client
	now              func() time.Time

	mu      sync.Mutex
	clients map[clientKey]*list.Element // of *sdkClients
	lru     *list.List
}

// clientKey holds a digest of the secret rather than the secret itself.
type clientKey struct {
	accessKeyID string
	secret      [sha256.Size]byte
	region      string
}

type sdkClients struct {
	key     clientKey
	api     *s3.Client
	presign *s3.PresignClient
}

// New builds a Client.
func New(o Options) (*Client, error) {
	endpoint, err := baseURL("endpoint", o.Endpoint)
	if err != nil {
		return nil, err
	}
	public := endpoint
	if o.PublicEndpoint != "" {
		if public, err = baseURL("public endpoint", o.PublicEndpoint); err != nil {
			return nil, err
		}
	}
	if o.HTTPClient == nil {
		return nil, errors.New("blob: an HTTP client is required (the outbound policy's)")
	}
	hc := o.HTTPClient
	if hc.Timeout == 0 {
		c := *hc
		c.Timeout = outbound.DefaultTimeout
		hc = &c
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Client{endpoint: endpoint, public: public, hc: hc, now: now,
		clients: map[clientKey]*list.Element{}, lru: list.New()}, nil
}

// baseURL checks an endpoint and drops a trailing slash, which would
// otherwise double the slash before the bucket in path-style URLs.
func baseURL(what, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("blob: %s: %w", what, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.RawQuery != "" {
		return "", fmt.Errorf("blob: %s %q is not an absolute http(s) URL without a query", what, raw)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// clientsFor returns the SDK clients for a credential pair and region,
// built on first use and kept in a bounded LRU: building one resolves the
// endpoint rules and the middleware stack, too much for every call.
func (c *Client) clientsFor(creds Credentials, region string) (*sdkClients, error) {
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return nil, errors.New("blob: credentials lack an access key id or secret")
	}
	k := clientKey{accessKeyID: creds.AccessKeyID, secret: sha256.Sum256([]byte(creds.SecretAccessKey)), region: region}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.clients[k]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*sdkClients), nil
	}
	api := s3.New(c.sdkOptions(c.endpoint, creds, region))
	// The presign client gets its own base client on the public endpoint;
	// it never sends a request (the SDK swaps in a no-op HTTP client).
	pub := s3.New(c.sdkOptions(c.public, creds, region))
	presign := s3.NewPresignClient(pub, func(po *s3.PresignOptions) {
		po.Presigner = clockPresigner{signer: newSigner(), now: c.now}
	})
	sc := &sdkClients{key: k, api: api, presign: presign}
	c.clients[k] = c.lru.PushFront(sc)
	if c.lru.Len() > maxClients {
		old := c.lru.Remove(c.lru.Back()).(*sdkClients)
		delete(c.clients, old.key)
	}
	return sc, nil
}

// sdkOptions are built by hand, not with config.LoadDefaultConfig, so that
// nothing is read from the environment, ~/.aws or the instance metadata
// service: each call's credentials are the ones its Secret holds.
func (c *Client) sdkOptions(endpoint string, creds Credentials, region string) s3.Options {
	return s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       region,
		Credentials:  staticCredentials{AccessKeyID: creds.AccessKeyID, SecretAccessKey: creds.SecretAccessKey, Source: "blob.Credentials"},
		HTTPClient:   c.hc,
		// Path-style (endpoint/bucket/key): S3-compatible servers reached by
		// IP or a cluster Service name have no wildcard DNS for
		// virtual-hosted buckets.
		UsePathStyle: true,
		// Since service/s3 v1.73.0 the SDK adds a CRC32 checksum to every
		// upload and asks for one on every download ("default integrity
		// protections", https://github.com/aws/aws-sdk-go-v2/discussions/2960).
		// Many S3-compatible servers refuse the headers (Cloudflare R2
		// answers 501 NotImplemented for x-amz-checksum-crc32,
		// https://github.com/aws/aws-sdk-js-v3/issues/6810; Linode
		// XAmzContentSHA256Mismatch, https://github.com/aws/aws-sdk-go-v2/issues/3003),
		// and a presigned GET would sign x-amz-checksum-mode, a header a
		// receiver's browser never sends. "When required" restores the
		// plain SigV4 requests every server understands.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		// One attempt: controllers retry through the runner's schedule
		// (internal/upstream/outbound), not inside a worker.
		Retryer: aws.NopRetryer{},
		AppID:   "switchboard",
	}
}

// staticCredentials is the call's key pair as the SDK's provider.
type staticCredentials aws.Credentials

func (s staticCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials(s), nil
}

// newSigner is the SigV4 signer the S3 client itself uses: S3 keys are
// signed unescaped (the SDK's newDefaultV4Signer sets the same option).
func newSigner() *v4.Signer {
	return v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
}

// Head reports an object's size, type and modification time.
func (c *Client) Head(ctx context.Context, o Object) (Info, error) {
	sc, err := c.clientsFor(o.Credentials, o.region())
	if err != nil {
		return Info{}, err
	}
	out, err := sc.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &o.Bucket, Key: &o.Key})
	if err != nil {
		return Info{}, classify("HeadObject", o, err)
	}
	return Info{Size: aws.ToInt64(out.ContentLength), ContentType: aws.ToString(out.ContentType),
		LastModified: aws.ToTime(out.LastModified)}, nil
}

// Delete removes an object. S3's DeleteObject is idempotent: "If there
// isn't a null version, Amazon S3 does not remove any objects but still
// responds that the command was successful"
// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html).
// Some S3-compatible servers answer 404 NoSuchKey instead (Google Cloud
// Storage's XML API, https://cloud.google.com/storage/docs/xml-api/delete-object),
// and a bucket that is gone holds no object either: all are success, so a
// retried expiry never fails on its own earlier delete.
func (c *Client) Delete(ctx context.Context, o Object) error {
	sc, err := c.clientsFor(o.Credentials, o.region())
	if err != nil {
		return err
	}
	_, err = sc.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &o.Bucket, Key: &o.Key})
	if err = classify("DeleteObject", o, err); errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// Put stores body as the object (the demo and tests upload with it; the
// operator itself never writes objects).
func (c *Client) Put(ctx context.Context, o Object, body []byte, contentType string) error {
	sc, err := c.clientsFor(o.Credentials, o.region())
	if err != nil {
		return err
	}
	in := &s3.PutObjectInput{Bucket: &o.Bucket, Key: &o.Key, Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body)))}
	if contentType != "" {
		in.ContentType = &contentType
	}
	_, err = sc.api.PutObject(ctx, in)
	return classify("PutObject", o, err)
}

// CreateBucket creates a bucket (the demo and tests); one the credentials
// already own is success.
func (c *Client) CreateBucket(ctx context.Context, bucket, region string, creds Credentials) error {
	region = regionOr(region)
	sc, err := c.clientsFor(creds, region)
	if err != nil {
		return err
	}
	in := &s3.CreateBucketInput{Bucket: &bucket}
	// us-east-1 is the one region that must not be named as a location
	// constraint (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html).
	if region != DefaultRegion {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	_, err = sc.api.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if errors.As(err, &owned) {
		return nil
	}
	return classify("CreateBucket", Object{Bucket: bucket}, err)
}

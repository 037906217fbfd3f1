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

package blob

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// MaxPresignTTL is the longest a SigV4 presigned URL can live:
// X-Amz-Expires is at most 604800 seconds
// (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html).
// A link lives up to 14 days, so its resolve route mints short-lived URLs
// per request rather than one for the link's lifetime.
const MaxPresignTTL = 7 * 24 * time.Hour

// PresignGet returns a GET URL for the object on the public endpoint, valid
// for ttl (whole seconds, between one second and MaxPresignTTL; the SDK
// signs X-Amz-Expires in seconds, so the fraction is dropped and the URL
// never outlives what the caller asked for). The download is an attachment
// named filename (the key's last element when empty). Only the host header
// is signed, so a browser following a redirect can use it as is.
func (c *Client) PresignGet(ctx context.Context, o Object, ttl time.Duration, filename string) (string, error) {
	ttl = ttl.Truncate(time.Second)
	if ttl < time.Second || ttl > MaxPresignTTL {
		return "", fmt.Errorf("blob: presign %s/%s: ttl %s is outside 1s..%s", o.Bucket, o.Key, ttl, MaxPresignTTL)
	}
	sc, err := c.clientsFor(o.Credentials, o.region())
	if err != nil {
		return "", err
	}
	if filename == "" {
		filename = path.Base(o.Key)
	}
	req, err := sc.presign.PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket: &o.Bucket, Key: &o.Key,
		ResponseContentDisposition: aws.String(ContentDisposition(filename)),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("blob: presign %s/%s: %w", o.Bucket, o.Key, err)
	}
	return req.URL, nil
}

// clockPresigner signs with the Client's clock instead of the SDK's (the
// SDK passes its own time.Now; the presigner interface takes the signing
// time as an argument, which is the one place to replace it).
type clockPresigner struct {
	signer *v4.Signer
	now    func() time.Time
}

func (p clockPresigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	_ time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	return p.signer.PresignHTTP(ctx, creds, r, payloadHash, service, region, p.now(), optFns...)
}

// ContentDisposition is an attachment header that keeps name, in the two
// forms RFC 6266 §4.3 recommends: filename="…" with an ASCII stand-in for
// clients that know no better, and filename*=UTF-8”… (RFC 8187
// percent-encoding) carrying the real name, which current browsers prefer.
// Control characters are dropped so the value cannot break the header.
func ContentDisposition(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(name, "_"))
	if name == "" {
		name = "download"
	}
	var ascii strings.Builder
	for _, r := range name {
		switch {
		case r == '"' || r == '\\' || r >= utf8.RuneSelf:
			ascii.WriteByte('_')
		default:
			ascii.WriteRune(r)
		}
	}
	return `attachment; filename="` + ascii.String() + `"; filename*=UTF-8''` + percentEncode(name)
}

// percentEncode keeps RFC 8187's attr-char and escapes every other byte.
func percentEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0xf])
	}
	return b.String()
}

// isAttrChar is RFC 8187 §3.2.1's attr-char: ALPHA / DIGIT / "!" / "#" /
// "$" / "&" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~".
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

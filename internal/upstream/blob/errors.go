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
	"errors"
	"fmt"
	"net/http"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/upstream/outbound"
)

// ErrNotFound wraps S3's 404 (NoSuchKey, NoSuchBucket, or the bodiless
// NotFound a HEAD gets): the object is not there.
var ErrNotFound = errors.New("object not found")

// ErrForbidden wraps S3's 403 (AccessDenied, SignatureDoesNotMatch,
// InvalidAccessKeyId): the credentials cannot reach the object, which a
// person must fix in the credentials Secret or the bucket's policy.
var ErrForbidden = errors.New("access to the object denied")

// forbiddenCodes are refusals of the credentials whatever status a server
// sends them with. AWS uses 403 for the first three
// (https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html#ErrorCodeList).
// versitygw without an IAM service (single-account mode) answers an
// unknown access key with 404 XAdminUserNotFound: its
// IAMServiceSingle.GetUserAccount returns ErrAdminUserNotFound
// (auth/iam_single.go, v1.8.0) where the request authenticator maps only
// ErrNoSuchUser to InvalidAccessKeyId (s3api/middlewares/authentication.go).
// Taken for a missing object, it would make Delete report success with
// keys that reach nothing. (A HEAD's 404 has no body to tell the two
// apart; run versitygw with --iam-dir, as internal/testenv does, to get
// S3's 403.)
var forbiddenCodes = map[string]bool{"AccessDenied": true, "SignatureDoesNotMatch": true, "InvalidAccessKeyId": true,
	"XAdminUserNotFound": true}

// transientCodes are S3's "try again" answers: SlowDown (503) and
// RequestTimeout (400: the client was too slow sending the body), from the
// same list.
var transientCodes = map[string]bool{"SlowDown": true, "RequestTimeout": true, "InternalError": true, "ServiceUnavailable": true}

// classify turns an SDK error of call op on o into an *outbound.Error of
// the s3 upstream, as internal/upstream/gapi does for Google's: 5xx, 429, SlowDown
// and no answer are transient (with Retry-After when sent), everything
// else permanent; 404 wraps ErrNotFound and 403 ErrForbidden. nil stays
// nil. The reason names the call and the object, never a credential.
func classify(op string, o Object, err error) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("S3 %s %s/%s", op, o.Bucket, o.Key)
	if o.Key == "" {
		what = fmt.Sprintf("S3 %s %s", op, o.Bucket)
	}
	e := &outbound.Error{Upstream: upstream.S3, Class: outbound.Permanent, Err: err}
	var re *awshttp.ResponseError
	// The SDK wraps transport failures in a ResponseError too, around an
	// empty response with status 0 (smithy-go's ClientHandler.Handle).
	if !errors.As(err, &re) || re.Response == nil || re.Response.Response == nil || re.HTTPStatusCode() == 0 {
		// No answer: the request was refused before it left, or the
		// connection failed.
		switch {
		case errors.Is(err, upstream.ErrHostNotAllowed):
			e.Reason = what + ": refused: " + upstream.ErrHostNotAllowed.Error()
		case errors.Is(err, context.Canceled):
			e.Class, e.Reason = outbound.Transient, what+": request cancelled"
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			e.Class, e.Reason = outbound.Transient, what+": no answer in time"
		default:
			e.Class, e.Reason = outbound.Transient, what+": connection failed"
		}
		return e
	}
	status := re.HTTPStatusCode()
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	if code == "" {
		code = http.StatusText(status)
	}
	e.Status = status
	e.Reason = fmt.Sprintf("%s: HTTP %d %s", what, status, code)
	e.RetryAfter = outbound.ParseRetryAfter(re.Response.Header.Get("Retry-After"), time.Now())
	switch {
	// Before the 404s: versitygw refuses an unknown key with a 404.
	case status == http.StatusForbidden || forbiddenCodes[code]:
		e.Err = errors.Join(ErrForbidden, err)
	case status == http.StatusNotFound:
		e.Err = errors.Join(ErrNotFound, err)
	case status == http.StatusTooManyRequests || status >= 500 || transientCodes[code]:
		e.Class = outbound.Transient
	}
	return e
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

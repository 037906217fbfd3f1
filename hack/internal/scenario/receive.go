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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// The ReceiveLink part of the demo, on a real S3 server (versitygw, started
// before the manager): the sample "prize-alice" shares a file for 7 days;
// this part shares a handout for handoutTTL, downloads it through its short
// link, and watches the link expire.
const (
	linkBucket    = "user-prize"
	sampleLinkKey = "user_prize/owner-1/alice/prize.zip" // config/samples' ReceiveLink
	handoutKey    = "user_prize/owner-1/bob/handout 配布資料.pdf"
	handoutTTL    = 20 * time.Second
)

// handoutBytes is the handout: 256 KiB, so the download is more than one
// read of the body.
var handoutBytes = func() []byte {
	b := make([]byte, 256<<10)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}()

// uploadBlobs creates the bucket and the sample's file, as the application
// that stores prizes would.
func (d *Demo) uploadBlobs(ctx context.Context) error {
	if err := d.S3.CreateBucket(ctx, linkBucket); err != nil {
		return err
	}
	return d.S3.Blob.Put(ctx, d.S3.Object(linkBucket, sampleLinkKey), []byte("the sample's prize\n"), "application/zip")
}

// receive shares a handout for handoutTTL, downloads it through its short
// link, and watches the link expire.
func (d *Demo) receive(ctx context.Context) error {
	Step("ReceiveLink: uploading a handout to versitygw and sharing it for %s", handoutTTL)
	l, share, err := d.shareHandout(ctx)
	if err != nil {
		return err
	}
	shareURL := string(share.Data[linktoken.ShareURL])
	fmt.Printf("    the share URL is in Secret %s (key %s); status holds only key id %q; expires at %s\n",
		share.Name, linktoken.ShareURL, l.Status.KeyID, l.Status.ExpiresAt.UTC().Format(time.RFC3339))

	Step("resolving the short link as a receiver's browser would (302 to a presigned versitygw URL)")
	if err := download(ctx, shareURL); err != nil {
		return err
	}

	Step("waiting for the expiry instant")
	if err := sleep(ctx, time.Until(l.Status.ExpiresAt.Time)+time.Second); err != nil {
		return err
	}
	return d.expired(ctx, l, share, shareURL)
}

// noFollow is a receiver's browser, stopped at the redirect to see it.
var noFollow = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// shareHandout uploads the handout and shares it with a ReceiveLink, waits
// for it and the sample's link to be Ready, and returns the link and its
// share Secret.
func (d *Demo) shareHandout(ctx context.Context) (*v1alpha1.ReceiveLink, *corev1.Secret, error) {
	if err := d.S3.Blob.Put(ctx, d.S3.Object(linkBucket, handoutKey), handoutBytes, "application/pdf"); err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(handoutBytes)
	fmt.Printf("    uploaded s3://%s/%s (%d bytes, sha256 %s)\n", linkBucket, handoutKey, len(handoutBytes), hex.EncodeToString(sum[:])[:16])
	l := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "handout-bob"}}
	l.Spec.Blob = v1alpha1.BlobLocation{Bucket: linkBucket, Key: handoutKey, CredentialsSecretRef: v1alpha1.SecretReference{Name: "blob-credentials"}}
	l.Spec.TTL = &metav1.Duration{Duration: handoutTTL}
	l.Spec.Owner = "owner-1"
	l.Spec.Receiver.Name = "bob"
	if err := d.C.Create(ctx, l); err != nil {
		return nil, nil, err
	}
	for _, name := range []string{"prize-alice", l.Name} {
		if _, err := d.waitLink(ctx, name, "Ready", func(l *v1alpha1.ReceiveLink) bool {
			return meta.IsStatusConditionTrue(l.Status.Conditions, v1alpha1.ReadyCondition)
		}); err != nil {
			return nil, nil, err
		}
	}
	if err := d.C.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
		return nil, nil, err
	}
	var share corev1.Secret
	if err := d.C.Get(ctx, types.NamespacedName{Namespace: Namespace, Name: l.Status.ShareSecretName}, &share); err != nil {
		return nil, nil, err
	}
	return l, &share, nil
}

// download resolves the short link and downloads what it redirects to:
// the handout, to the byte.
func download(ctx context.Context, shareURL string) error {
	var loc string
	// The webhook's cache sees the short-token object a moment after the
	// link is Ready.
	if err := poll.Until(ctx, "", pollEvery, 10*time.Second, func() (bool, error) {
		resp, err := noFollow.Get(shareURL)
		if err != nil {
			return false, poll.Stop(err)
		}
		_ = resp.Body.Close()
		loc = resp.Header.Get("Location")
		return resp.StatusCode == http.StatusFound, nil
	}); err != nil {
		return fmt.Errorf("resolve %s: %w", redactShort(shareURL), err)
	}
	resp, err := http.Get(loc) //nolint:gosec,noctx // the presigned URL the webhook answered
	if err != nil {
		return err
	}
	got, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	sum, gotSum := sha256.Sum256(handoutBytes), sha256.Sum256(got)
	fmt.Printf("    GET %s → 302 → %d, %d bytes, sha256 %s, %s\n", redactShort(shareURL), resp.StatusCode, len(got),
		hex.EncodeToString(gotSum[:])[:16], resp.Header.Get("Content-Disposition"))
	if resp.StatusCode != http.StatusOK || gotSum != sum {
		return fmt.Errorf("the download is not the handout: %d, %d bytes", resp.StatusCode, len(got))
	}
	return nil
}

// expired checks the link after its expiry: the short link answers 410,
// the link is Expired with its blob deleted from versitygw, and its share
// Secret is gone.
func (d *Demo) expired(ctx context.Context, l *v1alpha1.ReceiveLink, share *corev1.Secret, shareURL string) error {
	gone, err := noFollow.Get(shareURL)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(gone.Body)
	_ = gone.Body.Close()
	fmt.Printf("    GET %s → %d %s\n", redactShort(shareURL), gone.StatusCode, strings.TrimSpace(string(body)))
	if gone.StatusCode != http.StatusGone {
		return fmt.Errorf("after expiry the short link answered %d, want 410", gone.StatusCode)
	}
	if l, err = d.waitLink(ctx, l.Name, "Expired with its blob deleted", func(l *v1alpha1.ReceiveLink) bool {
		return l.Status.Phase == v1alpha1.LinkExpired && l.Status.BlobDeletedAt != nil
	}); err != nil {
		return err
	}
	late := l.Status.BlobDeletedAt.Sub(l.Status.ExpiresAt.Time)
	_, err = d.S3.Blob.Head(ctx, d.S3.Object(linkBucket, handoutKey))
	fmt.Printf("    phase %s, blob deleted %s after expiry; HEAD on versitygw: %v\n", l.Status.Phase, late, err)
	if !errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("the expired link's blob is still in versitygw (HEAD: %w)", err)
	}
	if err := d.C.Get(ctx, types.NamespacedName{Namespace: Namespace, Name: share.Name}, share); err == nil {
		return errors.New("the expired link's share Secret is still there")
	}
	fmt.Printf("    the share Secret is deleted; the link object stays %s (spec.retention), answering 410 until then\n", l.Spec.Retention.Duration)
	return nil
}

// redactShort keeps a short link's route and hides its token, which is the
// capability: demo output is pasted into chats and issues.
func redactShort(u string) string {
	i := strings.LastIndex(u, "/r/")
	if i < 0 {
		return u
	}
	return u[:i+3] + "…"
}

func (d *Demo) waitLink(ctx context.Context, name, what string, ok func(*v1alpha1.ReceiveLink) bool) (*v1alpha1.ReceiveLink, error) {
	l, err := waitObject(ctx, d.C, types.NamespacedName{Namespace: Namespace, Name: name}, time.Minute, ok)
	if err != nil {
		return nil, fmt.Errorf("ReceiveLink %s never %s (conditions %v): %w", name, what, l.Status.Conditions, err)
	}
	fmt.Printf("    receivelink/%s %s\n", name, what)
	return l, nil
}

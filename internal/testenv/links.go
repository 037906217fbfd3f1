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

package testenv

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/oauth"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// ShareLink uploads body to bucket of s3 under a key named after ns and
// name (with a non-ASCII file name, as receivers' files have), stores
// creds in the Secret "<name>-s3" of ns, creates the ReceiveLink name for
// it (an hour's ttl; change edits it first), and waits until it is Ready
// with its share Secret. It returns the link and the share Secret's data.
func ShareLink(t testing.TB, c client.Client, s3 *S3, bucket, ns, name, body string, creds blob.Credentials,
	change func(*v1alpha1.ReceiveLink)) (*v1alpha1.ReceiveLink, map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	key := "user_prize/" + ns + "/" + name + " 賞品.zip"
	if err := s3.Blob.Put(ctx, s3.Object(bucket, key), []byte(body), "application/zip"); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-s3"}, Data: creds.SecretData()}
	if err := c.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	l := &v1alpha1.ReceiveLink{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	l.Spec.Blob = v1alpha1.BlobLocation{Bucket: bucket, Key: key, CredentialsSecretRef: v1alpha1.SecretReference{Name: sec.Name}}
	l.Spec.TTL = &metav1.Duration{Duration: time.Hour}
	if change != nil {
		change(l)
	}
	if err := c.Create(ctx, l); err != nil {
		t.Fatal(err)
	}
	var shareSec corev1.Secret
	Eventually(t, "the link is Ready with its share Secret", func() bool {
		if err := c.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
			return false
		}
		return status.IsTrue(l, v1alpha1.ReadyCondition) &&
			c.Get(ctx, types.NamespacedName{Namespace: ns, Name: l.Status.ShareSecretName}, &shareSec) == nil
	})
	if len(shareSec.Data[linktoken.ShareShortToken]) == 0 {
		t.Fatalf("the share Secret of %s/%s holds no short token", ns, name)
	}
	return l, shareSec.Data
}

// NotionIntegration creates, in ns, a NotionIntegration "research" with
// its client Secret ("notion-client": clientID / clientSecret), its
// webhook Secret ("notion-webhook") and its token Secret ("notion-token",
// holding refreshToken; empty, the integration waits for a person to
// connect it).
func NotionIntegration(ctx context.Context, c client.Client, ns, clientID, clientSecret, refreshToken string) error {
	for name, data := range map[string]map[string]string{
		"notion-client":  {"client_id": clientID, "client_secret": clientSecret},
		"notion-webhook": {"token": "hook-token-" + ns},
		"notion-token":   {"refresh_token": refreshToken},
	} {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}); err != nil {
			return err
		}
	}
	ni := &v1alpha1.NotionIntegration{ObjectMeta: metav1.ObjectMeta{Name: "research", Namespace: ns}}
	ni.Spec.OAuth.ClientSecretRef.Name = "notion-client"
	ni.Spec.OAuth.TokenSecretRef.Name = "notion-token"
	ni.Spec.WebhookSecretRef.Name = "notion-webhook"
	return c.Create(ctx, ni)
}

// NotionSignup opens a NotionSignup "lab" in ns, as a platform team does:
// the public integration's client Secret ("notion-client": clientID /
// clientSecret) and the sign-up, with change applied before it is created.
func NotionSignup(ctx context.Context, c client.Client, ns, clientID, clientSecret string, change func(*v1alpha1.NotionSignup)) (*v1alpha1.NotionSignup, error) {
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "notion-client"},
		StringData: map[string]string{"client_id": clientID, "client_secret": clientSecret}}); err != nil {
		return nil, err
	}
	su := &v1alpha1.NotionSignup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lab"},
		Spec: v1alpha1.NotionSignupSpec{OAuth: v1alpha1.NotionSignupOAuth{ClientSecretRef: v1alpha1.SecretReference{Name: "notion-client"}}}}
	if change != nil {
		change(su)
	}
	return su, c.Create(ctx, su)
}

// ConnectToken waits for the connect token of the resource owner (in its
// Secret oauth.ConnectSecretName(owner.Name)) other than previous — after a
// successful connect the controller mints a new one — and returns it.
func ConnectToken(t testing.TB, c client.Client, owner types.NamespacedName, previous string) string {
	t.Helper()
	var token string
	Eventually(t, "a connect token for "+owner.String(), func() bool {
		var sec corev1.Secret
		err := c.Get(context.Background(), types.NamespacedName{Namespace: owner.Namespace, Name: oauth.ConnectSecretName(owner.Name)}, &sec)
		token = string(sec.Data[oauth.ConnectTokenKey])
		return err == nil && token != "" && token != previous
	})
	return token
}

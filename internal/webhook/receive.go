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
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/clocks"
	"github.com/switchboard-dev/switchboard/internal/contract/linktoken"
	"github.com/switchboard-dev/switchboard/internal/contract/session"
	"github.com/switchboard-dev/switchboard/internal/pages"
	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

// The receive route family resolves share links (seed 003's
// /api/receive/resolve):
//
//	GET /r/{short} → 302 to a presigned GET URL of the blob
//
// The short token is the capability: without the right one the answer is
// the same 404 whether a link exists or not, and nothing is written.

// The share-link routes read the link from the cache and record its
// resolves in its status (the auditor's patches), and write Events.
// +kubebuilder:rbac:groups=switchboard.dev,resources=receivelinks,verbs=get;list;watch
// +kubebuilder:rbac:groups=switchboard.dev,resources=receivelinks/status,verbs=get;patch
// +kubebuilder:rbac:groups="";events.k8s.io,resources=events,verbs=create;patch

var _ = family(Family{Name: "receive", Routes: func(d Deps) []Route {
	return []Route{{Pattern: "GET /r/{short}", Handler: resolve(d), Page: linkPage}}
}})

// linkPage is what a browser opening a share link gets for each refusal
// (seed 003's JSON errors stay for API clients): the words for the person
// who holds the link, by the refusal's status; a 429 or 503 page waits
// the Retry-After the JSON answer would carry.
func linkPage(e *Error) pages.Page {
	switch e.Status {
	case http.StatusNotFound:
		return refusal(e.Status, pages.LinkNotFoundTitle, pages.Say(pages.LinkNotFoundLine))
	case http.StatusGone:
		return refusal(e.Status, pages.LinkExpiredTitle, pages.Say(pages.LinkExpiredLine))
	case http.StatusForbidden:
		return refusal(e.Status, pages.LinkOtherUserTitle, pages.Say(pages.LinkOtherUserLine))
	case http.StatusTooManyRequests:
		return retrying(e.Status, max(e.retryAfter(), 1), pages.TooManyTitle, pages.Say(pages.SignInsBusyLine))
	case http.StatusServiceUnavailable:
		return retrying(e.Status, e.retryAfter(), pages.TryAgainTitle, pages.Say(pages.LinkBusyLine))
	case http.StatusInternalServerError:
		return notSetUp()
	}
	return refusal(e.Status, pages.SomethingTitle, pages.Say(pages.SomethingLine))
}

// DefaultPresignTTL is how long a resolved download URL works (never past
// the link's expiry): long enough to start a download, short enough that a
// URL copied out of a browser's history soon stops working.
const DefaultPresignTTL = 5 * time.Minute

// Presigner is what the resolve route needs of object storage; it signs
// locally and calls nobody. *blob.Client is the implementation.
type Presigner interface {
	PresignGet(ctx context.Context, o blob.Object, ttl time.Duration, filename string) (string, error)
}

// Links is what the receive routes need; nil Deps.Links answers every
// short link 404.
//
// The webhook faces the internet, so it reads no Secret in a link's own
// namespace: the manager copies what a resolve needs into Namespace (the
// link namespace), labelled managed-by so that the informer cache holds
// it. The short-token object carries the link's storage credentials; a
// key mirror (linktoken.KeysMirrorName) the key Secret the link names;
// links that name none use DefaultKeys, which is there already.
type Links struct {
	// Namespace holds the short-token objects and key mirrors (the
	// operator's, --link-namespace).
	Namespace string
	// Cache is the informer cache: it holds the short-token objects, the
	// key mirrors and the default key Secret (they carry the managed-by
	// label), so a resolve reads no API and no Secret outside Namespace.
	Cache client.Reader
	// Blobs presigns download URLs.
	Blobs Presigner
	// DefaultKeys is the key Secret of links that name none.
	DefaultKeys types.NamespacedName
	// PresignTTL is DefaultPresignTTL when zero.
	PresignTTL time.Duration
	// Clock is the wall clock when nil.
	Clock clock.PassiveClock
	// Audit records resolves (required).
	Audit *Auditor
}

func (l *Links) now() time.Time {
	return clocks.Now(l.Clock)
}

func notFoundLink() *Error { return Errorf(http.StatusNotFound, "no such link") }

func expiredLink() *Error { return Errorf(http.StatusGone, "the link has expired") }

// resolve answers GET /r/{short} in four steps: look the link up, check
// the capability its short-token object carries, check that the link
// serves and who is asking, then answer with the download.
func resolve(d Deps) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		lk, short := d.Links, r.PathValue("short")
		if lk == nil || !linktoken.ValidShort(short) {
			return notFoundLink()
		}
		obj, link, err := lk.lookUp(r.Context(), d.Client, short)
		if err != nil {
			return err
		}
		now := lk.now()
		claims, err := lk.open(r.Context(), link, obj, now)
		if err != nil {
			return err
		}
		if e := NotServing("link", link, false); e != nil {
			return e
		}
		who, answered, err := receiver(w, r, d, link, short)
		if answered || err != nil {
			return err
		}
		return lk.answer(w, r, link, obj, claims, who, now)
	}
}

// lookUp reads the short-token object of short from the cache and the
// link it names through links: 404 for none, or for a link that is gone or
// replaced (the sweep removes the object); 503 when either cannot be read.
func (l *Links) lookUp(ctx context.Context, links client.Reader, short string) (*corev1.Secret, *v1alpha1.ReceiveLink, error) {
	var obj corev1.Secret
	if err := l.Cache.Get(ctx, types.NamespacedName{Namespace: l.Namespace, Name: linktoken.ObjectName(short)}, &obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, notFoundLink()
		}
		return nil, nil, Unavailable(DefaultRetryAfter, "cannot look the link up; retry later").WithCause(err)
	}
	var link v1alpha1.ReceiveLink
	key := types.NamespacedName{Namespace: string(obj.Data[linktoken.DataNamespace]), Name: string(obj.Data[linktoken.DataName])}
	if err := links.Get(ctx, key, &link); err != nil || string(link.UID) != obj.Labels[linktoken.LinkUIDLabel] {
		if err == nil || apierrors.IsNotFound(err) {
			return nil, nil, notFoundLink() // the link is gone; the sweep removes the object
		}
		return nil, nil, Unavailable(DefaultRetryAfter, "cannot look the link up; retry later").WithCause(err)
	}
	return &obj, &link, nil
}

// open checks the capability: the link not expired (410) and the object's
// long token opening, with claims naming this link (404 otherwise, the
// same answer as for an unknown token; 503 when the keys cannot be read).
func (l *Links) open(ctx context.Context, link *v1alpha1.ReceiveLink, obj *corev1.Secret, now time.Time) (linktoken.Claims, error) {
	// 410 from the expiry instant, whether or not the controller has
	// run: a tombstone (long token stripped at expiry) says so too.
	exp, err := time.Parse(time.RFC3339, string(obj.Data[linktoken.DataExpiresAt]))
	if err != nil || !now.Before(exp) || len(obj.Data[linktoken.DataLongToken]) == 0 {
		return linktoken.Claims{}, expiredLink()
	}
	claims, err := l.unseal(ctx, link, obj)
	if errors.Is(err, errKeysUnreadable) {
		return linktoken.Claims{}, Unavailable(DefaultRetryAfter, "cannot read the link's keys; retry later").WithCause(err)
	}
	key := client.ObjectKeyFromObject(link).String()
	if err != nil {
		// An edited object or a removed key: say nothing more than for
		// an unknown token, and tell the operator (never the token).
		logr.FromContextOrDiscard(ctx).Info("a short link's long token does not open; answering 404", "link", key, "reason", err.Error())
		return linktoken.Claims{}, notFoundLink()
	}
	if claims.Namespace != link.Namespace || claims.Name != link.Name || claims.UID != link.UID ||
		claims.Bucket != link.Spec.Blob.Bucket || claims.Key != link.Spec.Blob.Key {
		logr.FromContextOrDiscard(ctx).Info("a short link's long token names another link; answering 404", "link", key)
		return linktoken.Claims{}, notFoundLink()
	}
	if !now.Before(claims.ExpiresAt) {
		return linktoken.Claims{}, expiredLink()
	}
	return claims, nil
}

// asker is who asks for a link, for the audit: the Discord user signed
// in (read only for a link restricted to one), and the client's address.
type asker struct{ discordUserID, addr string }

// String is who for the link's Resolved Event.
func (a asker) String() string {
	if a.discordUserID != "" {
		return "Discord user " + a.discordUserID
	}
	return "anonymous, from " + a.addr
}

// receiver is who receives: anyone, or for a link restricted to a Discord
// user that user's session (403 for another's). Without a session it
// starts a sign-in, and answered is true: the answer is written (or err
// says why not). Each way the request goes is a link.resolved fact.
func receiver(w http.ResponseWriter, r *http.Request, d Deps, link *v1alpha1.ReceiveLink, short string) (who asker, answered bool, err error) {
	who = asker{addr: sourceAddr(r)}
	want := link.Spec.Receiver.DiscordUserID
	if want == "" {
		recordLink(r.Context(), audit.LinkResolved, link, who, audit.OutcomeAllowed)
		return who, false, nil
	}
	if d.SignIn == nil {
		return who, false, Unavailable(DefaultRetryAfter, "this link needs a Discord sign-in, which this server does not offer; ask the operator")
	}
	sess, err := d.CurrentSession(r)
	switch {
	case errors.Is(err, session.ErrNoSession):
		if err := StartSignIn(w, r, d, Claim{Namespace: link.Namespace, Name: link.Name, UID: link.UID, Short: short}); err != nil {
			return who, true, err
		}
		recordLink(r.Context(), audit.LinkResolved, link, who, audit.OutcomeSignIn)
		return who, true, nil
	case err != nil:
		return who, false, SessionUnavailable(err)
	}
	who.discordUserID = sess.UserID
	if sess.UserID != want {
		recordLink(r.Context(), audit.LinkResolved, link, who, audit.OutcomeOtherUser)
		return who, false, Errorf(http.StatusForbidden, "this link is for another Discord user")
	}
	recordLink(r.Context(), audit.LinkResolved, link, who, audit.OutcomeAllowed)
	return who, false, nil
}

// recordLink records a resolve (with its outcome) or a download of link
// by who on the audit record, which outlives the link's Events. It names
// no token: the link by its namespace and name.
func recordLink(ctx context.Context, fact audit.FactName, link *v1alpha1.ReceiveLink, who asker, outcome string) {
	audit.Record(ctx, audit.Fact{Fact: fact, Kind: "ReceiveLink", Namespace: link.Namespace, Name: link.Name, Owner: link.Spec.Owner,
		Outcome: outcome, DiscordUserID: who.discordUserID, SourceAddress: who.addr})
}

// answer redirects to a presigned GET URL of the link's blob, one that
// works no longer than the link, and records the resolve (the link's
// Event and counts) and the download (the audit record).
func (l *Links) answer(w http.ResponseWriter, r *http.Request, link *v1alpha1.ReceiveLink, obj *corev1.Secret, claims linktoken.Claims, who asker, now time.Time) error {
	// A SigV4 signature is dated to the whole second (X-Amz-Date) and
	// lives X-Amz-Expires whole seconds: counted from the signing
	// second, the URL stops working no later than the link.
	ttl := min(l.presignTTL(), claims.ExpiresAt.Sub(now.Truncate(time.Second))).Truncate(time.Second)
	if ttl < time.Second {
		return expiredLink()
	}
	o, err := l.object(link, obj)
	if err != nil {
		return Unavailable(DefaultRetryAfter, "cannot read the link's storage credentials; retry later").WithCause(err)
	}
	u, err := l.Blobs.PresignGet(r.Context(), o, ttl, path.Base(link.Spec.Blob.Key))
	if err != nil {
		return Unavailable(DefaultRetryAfter, "cannot sign the download; retry later").WithCause(err)
	}
	l.Audit.Record(link, who.String(), now)
	recordLink(r.Context(), audit.LinkDownloaded, link, who, "")
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// The download URL carries a signature: no page it leads to
	// should see it in a Referer.
	h.Set("Referrer-Policy", "no-referrer")
	// u is the URL this server presigned for the link's own object in
	// its own store, not one the request chose.
	http.Redirect(w, r, u, http.StatusFound) //nolint:gosec // G710: see above
	return nil
}

func (l *Links) presignTTL() time.Duration {
	if l.PresignTTL > 0 {
		return l.PresignTTL
	}
	return DefaultPresignTTL
}

// errKeysUnreadable: the cache could not be read (not a missing key).
var errKeysUnreadable = errors.New("cannot read the link's keys")

// unseal opens the object's long token with the keys it was sealed with:
// the mirror of the key Secret it names, or the default key Secret, both
// in Namespace and read from the cache. The manager writes a new key into
// the mirror before it seals a token with it, and both objects are seen in
// order on one watch, so a cache holding the token holds its key. A key
// Secret that is gone (the manager deletes its mirror) is a key that is
// gone.
func (l *Links) unseal(ctx context.Context, link *v1alpha1.ReceiveLink, obj *corev1.Secret) (linktoken.Claims, error) {
	key := l.DefaultKeys
	name, recorded := obj.Data[linktoken.DataKeySecret]
	if ref := link.Spec.EncryptionKeySecretRef; !recorded && ref != nil {
		name = []byte(ref.Name) // minted before the objects named it
	}
	if len(name) > 0 {
		key = types.NamespacedName{Namespace: l.Namespace, Name: linktoken.KeysMirrorName(link.Namespace, string(name))}
	}
	var sec corev1.Secret
	if err := l.Cache.Get(ctx, key, &sec); err != nil {
		if apierrors.IsNotFound(err) {
			return linktoken.Claims{}, fmt.Errorf("no key Secret %s: %w", key, linktoken.ErrUnsealable)
		}
		return linktoken.Claims{}, fmt.Errorf("%w: %w", errKeysUnreadable, err)
	}
	kr, err := linktoken.KeyringFrom(&sec)
	if err != nil {
		return linktoken.Claims{}, err
	}
	return linktoken.Open(kr, string(obj.Data[linktoken.DataKeyID]), string(obj.Data[linktoken.DataLongToken]))
}

// object is the link's blob with the copy of its credentials that the
// manager keeps in the short-token object.
func (l *Links) object(link *v1alpha1.ReceiveLink, obj *corev1.Secret) (blob.Object, error) {
	creds := blob.Credentials{AccessKeyID: string(obj.Data[linktoken.DataAccessKeyID]), SecretAccessKey: string(obj.Data[linktoken.DataSecretAccessKey])}
	if creds.AccessKeyID == "" || creds.SecretAccessKey == "" {
		return blob.Object{}, fmt.Errorf("the short-token object holds no copy of the storage credentials in Secret %s/%s (gone or incomplete?): %w",
			link.Namespace, link.Spec.Blob.CredentialsSecretRef.Name, blob.ErrCredentialsIncomplete)
	}
	return blob.Object{Bucket: link.Spec.Blob.Bucket, Key: link.Spec.Blob.Key, Region: link.Spec.Blob.Region, Credentials: creds}, nil
}

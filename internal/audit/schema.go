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

package audit

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// FactName is what happened. The names are stable: a log pipeline and
// its queries select on them (docs/audit.md).
type FactName string

// The facts of the seeds' own records: seed 002's deleted appointments,
// seed 004's SyncLog.
const (
	// AppointmentDeleted: a CalendarWatch's objects sink deleted the
	// appointment of a cancelled event (seed 002 Property 4).
	AppointmentDeleted FactName = "calendar.appointment_deleted"
	// SessionAppended: a SheetSync appended its session's row to the
	// sheet (seed 004's SyncLog); the sheetsync controller records it.
	SessionAppended FactName = "sheets.session_appended"
)

// The facts of a share link's life (seed 003 known issue 4: who issued a
// link, who used it).
const (
	// LinkIssued: a ReceiveLink's short link was minted and written to
	// its share Secret.
	LinkIssued FactName = "link.issued"
	// LinkResolved: a request for /r/{short} opened a serving link (the
	// short token was the capability); Outcome says what came of it.
	LinkResolved FactName = "link.resolved"
	// LinkDownloaded: the webhook sent the receiver a presigned download
	// URL of the link's file.
	LinkDownloaded FactName = "link.downloaded"
	// LinkExpired: a ReceiveLink became Expired.
	LinkExpired FactName = "link.expired"
)

// The facts of a grant's life.
const (
	// OAuthConnected: a grant from a connect link or a sign-up was saved
	// in a resource's token Secret.
	OAuthConnected FactName = "oauth.connected"
	// OAuthRefreshed: a refreshed grant was saved in its token Secret.
	OAuthRefreshed FactName = "oauth.refreshed"
	// OAuthRevoked: the provider refused a resource's grant for good (a
	// refresh answered invalid_grant, or an API call 401): a person must
	// connect again. Once per refusal, not at every retry.
	OAuthRevoked FactName = "oauth.revoked"
)

// SourceCalendarSync is the source of every AppointmentDeleted (seed 002
// Property 4).
const SourceCalendarSync = "Google Calendar Sync"

// Outcomes of a LinkResolved.
const (
	// OutcomeAllowed: the person may have the file (anyone, or the
	// Discord user the link is for); a LinkDownloaded follows unless the
	// storage could not sign the download.
	OutcomeAllowed = "allowed"
	// OutcomeSignIn: the link is for one Discord user and the browser has
	// no session: a Discord sign-in was started.
	OutcomeSignIn = "sign_in"
	// OutcomeOtherUser: a signed-in Discord user who is not the link's
	// receiver was refused (403).
	OutcomeOtherUser = "other_user"
)

// field is one key a fact writes and where its value is.
type field struct {
	key   string
	value func(*Fact) any
}

func str(key string, v func(*Fact) string) field {
	return field{key: key, value: func(f *Fact) any { return v(f) }}
}

var (
	fSource        = str("source", func(f *Fact) string { return f.Source })
	fEventID       = str("eventID", func(f *Fact) string { return f.EventID })
	fReason        = str("reason", func(f *Fact) string { return f.Reason })
	fDeletedAPI    = str("deletedAPIVersion", func(f *Fact) string { return f.DeletedAPIVersion })
	fDeletedKind   = str("deletedKind", func(f *Fact) string { return f.DeletedKind })
	fDeletedName   = str("deletedName", func(f *Fact) string { return f.DeletedName })
	fDeletedUID    = str("deletedUID", func(f *Fact) string { return f.DeletedUID })
	fOwner         = str("owner", func(f *Fact) string { return f.Owner })
	fReceiver      = str("receiver", func(f *Fact) string { return f.Receiver })
	fReceiverUser  = str("receiverDiscordUserID", func(f *Fact) string { return f.ReceiverDiscordUserID })
	fBlob          = str("blob", func(f *Fact) string { return f.Blob })
	fShareSecret   = str("shareSecret", func(f *Fact) string { return f.ShareSecret })
	fExpiresAt     = str("expiresAt", func(f *Fact) string { return timeString(f.ExpiresAt) })
	fDiscordUserID = str("discordUserID", func(f *Fact) string { return f.DiscordUserID })
	fSourceAddress = str("sourceAddress", func(f *Fact) string { return f.SourceAddress })
	fOutcome       = str("outcome", func(f *Fact) string { return f.Outcome })
	fTarget        = str("target", func(f *Fact) string { return f.Target })
	fProvider      = str("provider", func(f *Fact) string { return f.Provider })
	fSignUp        = str("signUp", func(f *Fact) string { return f.SignUp })
	fTokenSecret   = str("tokenSecret", func(f *Fact) string { return f.TokenSecret })
	fAction        = str("action", func(f *Fact) string { return f.Action })
	fConnection    = str("connection", func(f *Fact) string { return f.Connection })
	fRow           = field{key: "row", value: func(f *Fact) any { return f.Row }}
)

// schema is every fact's own fields, in the order they are written, after
// fact, kind, namespace and name. docs/audit.md describes each; the
// package's test holds the two together.
var schema = map[FactName][]field{
	AppointmentDeleted: {fSource, fEventID, fReason, fDeletedAPI, fDeletedKind, fDeletedName, fDeletedUID},
	LinkIssued:         {fOwner, fReceiver, fReceiverUser, fBlob, fExpiresAt, fShareSecret},
	LinkResolved:       {fOwner, fOutcome, fDiscordUserID, fSourceAddress},
	LinkDownloaded:     {fOwner, fDiscordUserID, fSourceAddress},
	LinkExpired:        {fOwner, fBlob, fExpiresAt, fReason},
	OAuthConnected:     {fTarget, fProvider, fSignUp, fTokenSecret},
	OAuthRefreshed:     {fProvider, fTokenSecret},
	OAuthRevoked:       {fProvider, fAction, fTokenSecret},
	SessionAppended:    {fConnection, fRow},
}

// CommonKeys are the keys every fact writes first.
var CommonKeys = []string{"fact", "kind", "namespace", "name"}

// Facts are the facts recorded, sorted.
func Facts() []FactName {
	out := make([]FactName, 0, len(schema))
	for f := range schema {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Keys are the keys a line of fact holds beyond the logger's own (level,
// ts, logger, msg): CommonKeys, then its fields; nil for no fact.
func Keys(fact FactName) []string {
	fields, ok := schema[fact]
	if !ok {
		return nil
	}
	keys := slices.Clone(CommonKeys)
	for _, fd := range fields {
		keys = append(keys, fd.key)
	}
	return keys
}

// timeString is t in RFC 3339, UTC, to the second; "" for none.
func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

var kinds = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	return s
})

// KindOf is obj's kind: its type meta's, else the one client-go's and
// Switchboard's schemes know its Go type by ("" when neither does).
func KindOf(obj runtime.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	gvk, err := apiutil.GVKForObject(obj, kinds())
	if err != nil {
		return ""
	}
	return gvk.Kind
}

// SubjectOf names obj for WithSubject.
func SubjectOf(obj client.Object) Subject {
	return Subject{Kind: KindOf(obj), Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

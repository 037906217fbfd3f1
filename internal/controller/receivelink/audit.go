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

package receivelink

import (
	"context"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/audit"
	"github.com/switchboard-dev/switchboard/internal/reconcile/runner"
	"github.com/switchboard-dev/switchboard/internal/reconcile/status"
)

// The audit record of a link (seed 003 known issue 4: who issued a share
// token and who used it), which outlives its Events: the controller
// records each link issued and expired; the webhook each resolve and
// download.

// linkFact is fact about l, with the fields every link fact of the
// controller writes.
func linkFact(fact audit.FactName, l *v1alpha1.ReceiveLink) audit.Fact {
	return audit.Fact{Fact: fact, Kind: "ReceiveLink", Namespace: l.Namespace, Name: l.Name, Owner: l.Spec.Owner,
		Blob: "s3://" + l.Spec.Blob.Bucket + "/" + l.Spec.Blob.Key, ExpiresAt: linkExpiry(l)}
}

// recordIssued records a short link written to its share Secret: once per
// mint, since a later reconcile finds the Secret and mints nothing.
func recordIssued(ctx context.Context, l *v1alpha1.ReceiveLink) {
	f := linkFact(audit.LinkIssued, l)
	f.Receiver, f.ReceiverDiscordUserID, f.ShareSecret = l.Spec.Receiver.Name, l.Spec.Receiver.DiscordUserID, shareSecretName(l)
	audit.Record(ctx, f)
}

// recordExpired writes the Expired status at once and then records the
// expiry: the phase in status is what tells a later reconcile it was
// recorded. When the write fails, status goes back to was (what it held
// before this expiry), so that no later write marks the link Expired
// without the record; the next reconcile expires it again (what is
// deleted stays deleted) and records it then.
func recordExpired(ctx context.Context, l *v1alpha1.ReceiveLink, run *runner.Run, was *v1alpha1.ReceiveLinkStatus) runner.Outcome {
	if err := run.WriteAhead(ctx, l); err != nil {
		l.Status = *was
		return runner.Transient(v1alpha1.UpstreamUnavailableReason, err)
	}
	f := linkFact(audit.LinkExpired, l)
	if c := status.Get(l, v1alpha1.ReadyCondition); c != nil {
		f.Reason = c.Reason
	}
	audit.Record(ctx, f)
	return runner.Continue()
}

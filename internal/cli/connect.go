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

package cli

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	runtimepkg "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/oauth"
)

func (r *root) connectCommand() *cobra.Command {
	var open, reconnect bool
	cmd := &cobra.Command{
		Use:   "connect " + targetUsage,
		Short: "Print (or open) the OAuth connect link of a " + apiKindsThat(isOAuth, "or"),
		Long: `Connect prints the one-use OAuth connect link of an object, read from the
Secret its status.connectSecretName names (key url): open it in a browser to
grant the object access to the account. Only the link goes to standard
output; notes go to standard error.

The link is a capability: whoever opens it connects their account, so it is
printed only here, where you asked for it. It works once and for an hour.

When the object's grant works (condition Authenticated True), the link answers
409 Conflict and changes nothing, so that a leaked link cannot swap a working
grant for a stranger's. --reconnect first sets the switchboard.dev/reconnect
annotation to a new value, which lets the link replace the grant once.`,
		Example: `  # Print the link
  kubectl switchboard connect notion/research

  # Open it in the browser (xdg-open, or open on macOS)
  kubectl switchboard connect calwatch visits --open

  # Replace a grant that still works with another account's
  kubectl switchboard connect sheetconn/timesheet --reconnect --open`,
		Args: cobra.RangeArgs(1, 2),
		RunE: r.onObject(func(ctx context.Context, s *session, t target) error {
			return s.connect(ctx, t, open, reconnect)
		}),
	}
	cmd.Flags().BoolVar(&open, "open", false, "open the link in a browser as well as printing it")
	cmd.Flags().BoolVar(&reconnect, "reconnect", false, "set the switchboard.dev/reconnect annotation to a new value first, so that the link may replace a grant that still works")
	return cmd
}

func isOAuth(o runtimepkg.Object) bool { _, ok := o.(v1alpha1.OAuthObject); return ok }

// connect prints t's connect link, and explains why when there is none.
func (s *session) connect(ctx context.Context, t target, open, reconnect bool) error {
	if oauthKinds := s.kinds.those(s.scheme, isOAuth); !slices.ContainsFunc(oauthKinds, func(k kind) bool { return k.Kind == t.kind.Kind }) {
		return fmt.Errorf("a %s has no connect link: only the OAuth kinds do: %s", t.kind.Kind, oauthKinds.describe())
	}
	obj, err := s.get(ctx, t)
	if err != nil {
		return err
	}
	if reconnect {
		value := s.opts.Now().UTC().Format(time.RFC3339Nano)
		if err := s.annotate(ctx, obj, v1alpha1.ReconnectAnnotation, value); err != nil {
			return fmt.Errorf("annotate %s: %w", t, err)
		}
		fmt.Fprintf(s.errOut(), "► set %s=%s on %s: the link may now replace its grant, once\n", v1alpha1.ReconnectAnnotation, value, t)
	}
	oo, ok := obj.(v1alpha1.OAuthObject)
	if !ok {
		return fmt.Errorf("%s is not an OAuth object", t)
	}
	cs := oo.GetOAuthConnect()
	if cs.ConnectSecretName == "" {
		return fmt.Errorf("%s has no connect link yet: status.connectSecretName is empty, so its controller has not minted one. "+
			"Is the manager running, and does it watch namespace %s? %s", t, t.key.Namespace, readySays(obj))
	}
	link, err := s.connectLink(ctx, t, cs.ConnectSecretName)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.out(), link)
	res := &oauth.Resource{Object: obj, Connect: *cs}
	if c := meta.FindStatusCondition(oo.GetReconcileStatus().Conditions, v1alpha1.AuthenticatedCondition); c != nil {
		res.Authenticated = c.Status
	}
	if oauth.StatusLocked(res) {
		fmt.Fprintf(s.errOut(), "! %s has a grant that works (Authenticated True): this link answers 409 Conflict and changes nothing "+
			"unless the %s annotation is set to a new value. To replace the grant: %s connect %s --reconnect\n",
			t, v1alpha1.ReconnectAnnotation, Name, t)
	}
	if exp := cs.ConnectExpiresAt; exp != nil && !exp.After(s.opts.Now()) {
		fmt.Fprintf(s.errOut(), "! this link expired at %s: the operator mints a new one ten minutes after that; run this again then\n", exp.UTC().Format(time.RFC3339))
	}
	if open {
		if err := s.opts.Open(ctx, link); err != nil {
			// The error is the opener's, which never quotes its argument:
			// the link stays on standard output alone.
			return fmt.Errorf("could not open a browser (%w): open the link printed above yourself", err)
		}
	}
	return nil
}

// connectLink reads the link of t's connect Secret name, and explains
// why when it cannot.
func (s *session) connectLink(ctx context.Context, t target, name string) (string, error) {
	var sec corev1.Secret
	err := s.client.Get(ctx, types.NamespacedName{Namespace: t.key.Namespace, Name: name}, &sec)
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Errorf("the connect Secret %s that %s's status.connectSecretName names does not exist: its controller mints it again when it next reconciles "+
			"(%s reconcile %s)", name, t, Name, t)
	case apierrors.IsForbidden(err):
		return "", fmt.Errorf("you may not read the connect Secret %s in namespace %s: connect needs get on secrets there, since the link is a capability", name, t.key.Namespace)
	case err != nil:
		return "", fmt.Errorf("get the connect Secret %s: %w", name, err)
	}
	link := string(sec.Data[oauth.ConnectURLKey])
	if link == "" {
		return "", fmt.Errorf("the connect Secret %s holds a token but no link (key %q): the manager does not know the webhook server's public URL. "+
			"Set the manager's --public-url (the chart's publicURL, or webhook.ingress.host)", name, oauth.ConnectURLKey)
	}
	return link, nil
}

// readySays is an object's Ready condition, as a sentence for an error.
func readySays(obj client.Object) string {
	r := readyOf(obj)
	says := "Ready is " + r.Status
	for _, part := range []string{r.Reason, r.Message} {
		if part != "" {
			says += ": " + part
		}
	}
	return says + "."
}

// openBrowser opens url with the desktop's opener: open on macOS,
// xdg-open elsewhere.
func openBrowser(ctx context.Context, url string) error {
	opener := "xdg-open"
	if runtime.GOOS == "darwin" {
		opener = "open"
	}
	// The opener is fixed; url is the link the person asked to open.
	return exec.CommandContext(ctx, opener, url).Run() //nolint:gosec // G204: a fixed program, given the link to open
}

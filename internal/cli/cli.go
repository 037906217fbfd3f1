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

// Package cli is kubectl-switchboard, the kubectl plugin that does what
// otherwise takes a line of jsonpath and base64: print an OAuth connect
// link, ask for a reconcile and wait for its outcome, suspend and resume,
// list every Switchboard object with its Ready condition, show a parent
// with its children, and list an object's Events (docs/cli.md).
//
// Each command is a cobra command under one root that carries kubectl's
// own kubeconfig flags (k8s.io/cli-runtime's ConfigFlags), so --kubeconfig,
// --context, -n and the rest mean what they mean to kubectl. The root is
// built by NewCommand from Options, which tests fill with their own
// streams, kubeconfig and browser opener.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/internal/setup"
)

// Name is how kubectl runs the plugin: the binary is kubectl-switchboard.
const Name = "kubectl switchboard"

// Options are what a run depends on besides its arguments.
type Options struct {
	// IOStreams are the standard streams (genericiooptions.IOStreams{In:
	// os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} for the binary).
	IOStreams genericiooptions.IOStreams
	// Version is printed by --version (the binary's is set at build time).
	Version string
	// ConfigFlags, when set, are the kubeconfig flags to use instead of
	// new ones; their values can still be set on the command line.
	ConfigFlags *genericclioptions.ConfigFlags
	// Open opens a URL in a browser (connect --open); nil runs xdg-open,
	// or open on macOS.
	Open func(ctx context.Context, url string) error
	// Now is the clock of requested-at and reconnect values and of ages;
	// nil is time.Now.
	Now func() time.Time
}

// exitError is an error whose message has been printed already, or that
// wants a particular exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Main runs the plugin with args (os.Args[1:]) and returns its exit code:
// 0 on success, 1 when the command failed (its error is printed on
// ErrOut).
func Main(ctx context.Context, args []string, opts Options) int {
	cmd := NewCommand(opts)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(errOut(opts), "error:", err)
		var e *exitError
		if errors.As(err, &e) {
			return e.code
		}
		return 1
	}
	return 0
}

func errOut(opts Options) io.Writer {
	if opts.IOStreams.ErrOut != nil {
		return opts.IOStreams.ErrOut
	}
	return os.Stderr
}

// root is what every command shares: the options, the kubeconfig flags
// and, once a command needs the API server, a session.
type root struct {
	opts  Options
	flags *genericclioptions.ConfigFlags
}

// NewCommand builds the root command with every subcommand.
func NewCommand(opts Options) *cobra.Command {
	if opts.IOStreams.Out == nil {
		opts.IOStreams.Out = os.Stdout
	}
	if opts.IOStreams.ErrOut == nil {
		opts.IOStreams.ErrOut = os.Stderr
	}
	if opts.IOStreams.In == nil {
		opts.IOStreams.In = os.Stdin
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Open == nil {
		opts.Open = openBrowser
	}
	r := &root{opts: opts, flags: opts.ConfigFlags}
	if r.flags == nil {
		r.flags = genericclioptions.NewConfigFlags(true)
	}
	cmd := &cobra.Command{
		Use:   "switchboard",
		Short: "Connect, reconcile, suspend and inspect Switchboard objects",
		Long: `kubectl switchboard works with Switchboard's custom resources (API group
switchboard.dev): it prints an OAuth connect link, asks for a reconcile and
waits for its outcome, suspends and resumes, lists every Switchboard object
with its Ready condition, shows a parent with its children, and lists an
object's Events.

KIND is any Switchboard kind, case-insensitive, by its name, plural or short
name: notionintegration, notionintegrations and notion are the same kind.
An object is named KIND/NAME or KIND NAME, in the namespace of -n or of the
kubeconfig context.`,
		Version:       opts.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: Name},
		// cobra's completion command would print a script for a
		// "kubectl switchboard" binary that does not exist: kubectl
		// completes plugins through kubectl_complete-switchboard instead.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		// A bare `kubectl switchboard` shows the help, as kubectl does.
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.SetIn(opts.IOStreams.In)
	cmd.SetOut(opts.IOStreams.Out)
	cmd.SetErr(opts.IOStreams.ErrOut)
	r.flags.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		r.connectCommand(),
		r.reconcileCommand(),
		r.suspendCommand(true),
		r.suspendCommand(false),
		r.getCommand(),
		r.treeCommand(),
		r.eventsCommand(),
	)
	return cmd
}

// session is one command's connection to the API server.
type session struct {
	*root
	cfg       *rest.Config
	scheme    *runtime.Scheme
	client    client.WithWatch
	namespace string
	kinds     kinds
}

// session connects to the API server the kubeconfig flags name and
// learns the Switchboard kinds it serves.
func (r *root) session() (*session, error) {
	cfg, err := r.flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	ns, _, err := r.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	scheme := setup.Scheme()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	ks, err := discoverKinds(cfg)
	if err != nil {
		return nil, err
	}
	return &session{root: r, cfg: cfg, scheme: scheme, client: c, namespace: ns, kinds: ks}, nil
}

// onObject is the RunE of a command on one object (KIND/NAME or KIND
// NAME): it connects, names the object, and runs do.
func (r *root) onObject(do func(ctx context.Context, s *session, t target) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		s, err := r.session()
		if err != nil {
			return err
		}
		t, err := s.parseTarget(args)
		if err != nil {
			return err
		}
		return do(cmd.Context(), s, t)
	}
}

func (s *session) out() io.Writer    { return s.opts.IOStreams.Out }
func (s *session) errOut() io.Writer { return s.opts.IOStreams.ErrOut }

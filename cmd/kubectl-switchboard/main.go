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

// Command kubectl-switchboard is the kubectl plugin for Switchboard:
// `kubectl switchboard connect|reconcile|suspend|resume|get|tree|events`
// (docs/cli.md). It is built by `make build` into ./bin and shipped in the
// release tarballs with a krew manifest (`make release`).
package main

import (
	"context"
	"os"
	"os/signal"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	// Authentication plugins of the cloud providers' kubeconfigs (exec,
	// OIDC), as krew's best practices ask of a Go plugin.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/switchboard-dev/switchboard/internal/cli"
)

// version is set at build time: -ldflags "-X main.version=$(git describe)".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.Options{
		IOStreams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Version:   version,
	})
	stop()
	os.Exit(code)
}

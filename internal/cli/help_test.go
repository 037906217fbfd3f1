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

package cli_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/switchboard-dev/switchboard/internal/cli"
)

// TestEveryCommandHasHelp: --help on the root and on every command
// prints its usage with the kubectl prefix, an example, and the
// kubeconfig flags, without reaching any API server.
func TestEveryCommandHasHelp(t *testing.T) {
	var names []string
	for _, c := range cli.NewCommand(cli.Options{}).Commands() {
		if c.Name() != "help" {
			names = append(names, c.Name())
		}
	}
	slices.Sort(names)
	if want := []string{"connect", "events", "get", "reconcile", "resume", "suspend", "tree"}; !slices.Equal(names, want) {
		t.Errorf("commands %v, want %v", names, want)
	}
	for _, name := range append([]string{""}, names...) {
		t.Run("help "+name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := strings.Fields(name + " --help")
			code := cli.Main(t.Context(), args, cli.Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}})
			if code != 0 || errOut.Len() != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut.String())
			}
			usage := strings.TrimSpace("kubectl switchboard " + name)
			for _, want := range []string{"Usage:\n  " + usage, "--kubeconfig", "--namespace"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("help lacks %q:\n%s", want, out.String())
				}
			}
			if name != "" && !strings.Contains(out.String(), "Examples:\n  ") {
				t.Errorf("help has no examples:\n%s", out.String())
			}
		})
	}
}

// TestVersionAndUsageErrors: --version prints the build's version; a
// wrong number of arguments or an unknown command fails before reaching
// any API server.
func TestVersionAndUsageErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	opts := cli.Options{Version: "v1.2.3", IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
	if code := cli.Main(t.Context(), []string{"--version"}, opts); code != 0 || !strings.Contains(out.String(), "v1.2.3") {
		t.Errorf("--version: exit %d, stdout %q", code, out.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"reconcile"}, "accepts between 1 and 2 arg(s), received 0"},
		{[]string{"connect", "a", "b", "c"}, "accepts between 1 and 2 arg(s), received 3"},
		{[]string{"get", "a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		errOut.Reset()
		// No API server is named: these fail on their arguments alone.
		code := cli.Main(t.Context(), append(tc.args, "--kubeconfig", "/nonexistent"), opts)
		if code == 0 || !strings.HasPrefix(errOut.String(), "error: ") || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

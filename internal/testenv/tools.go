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
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// PinnedTool is the path of a tool the Makefile pins: $<ENV> (the
// Makefile sets it), else bin/<name> of the repository.
func PinnedTool(name, env string) (string, error) {
	bin := os.Getenv(env)
	if bin == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		bin = filepath.Join(root, "bin", name)
	}
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // the tool the test's own environment names
		return "", fmt.Errorf("%s not found at %s: run `make %s` or set %s", name, bin, name, env)
	}
	return bin, nil
}

// DefaultChromium is where Debian's chromium package puts the browser.
const DefaultChromium = "/usr/bin/chromium"

// Chromium is the path of the Chromium the browser tests drive: $CHROMIUM
// (the Makefile sets it), else DefaultChromium. Unlike the tools in bin/,
// it is a Debian package (`make chromium` installs it as root). A missing
// browser is an error, so the tests fail rather than skip.
func Chromium() (string, error) {
	bin := os.Getenv("CHROMIUM")
	if bin == "" {
		bin = DefaultChromium
	}
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // the browser the test's own environment names
		return "", fmt.Errorf("chromium not found at %s: run `make chromium` (as root) or set CHROMIUM", bin)
	}
	return bin, nil
}

// Helm runs the pinned helm (PinnedTool) with args, in a throwaway home:
// no user configuration or cache leaks in, and nothing is written to the
// user's home.
func Helm(ctx context.Context, stdout, stderr io.Writer, args ...string) error {
	bin, err := PinnedTool("helm", "HELM")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "helm-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // the pinned helm with the test's own arguments
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+dir, "HELM_CONFIG_HOME="+dir, "HELM_DATA_HOME="+dir)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

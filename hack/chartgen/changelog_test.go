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

package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestChangelogChanges(t *testing.T) {
	const head = "# Changelog\n\nIntro.\n\n"
	for name, c := range map[string]struct {
		changelog, version string
		want               []change
		wantErr            string
	}{
		"reads the version's own section, kinds, groups, continuations and links": {
			changelog: head + "## [Unreleased]\n\n### Added\n\n- Not yet.\n\n" +
				"## [1.2.0] - 2026-01-02\n\nWhat 1.2 is.\n\n### Security\n\n#### Webhook\n\n- Caps [bodies](docs/a.md#caps)\n  at 1 MiB.\n- See [the advisory](https://example.com/x).\n\n### Removed\n\n- `--old`.\n\n" +
				"## [1.1.0]\n\n### Added\n\n- Old.\n\n[Unreleased]: https://example.com/compare\n",
			version: "1.2.0",
			want: []change{
				{Kind: "security", Description: "Webhook: Caps bodies at 1 MiB.", Links: []link{{Name: "bodies", URL: "https://h/blob/main/docs/a.md#caps"}}},
				{Kind: "security", Description: "Webhook: See the advisory.", Links: []link{{Name: "the advisory", URL: "https://example.com/x"}}},
				{Kind: "removed", Description: "`--old`."},
			},
		},
		"falls back to Unreleased, which ends at the link references": {
			changelog: head + "## [Unreleased]\n\n### Fixed\n\n- A fix.\n\n[Unreleased]: https://example.com/compare\n",
			version:   "0.1.0",
			want:      []change{{Kind: "fixed", Description: "A fix."}},
		},
		"refuses a heading that is no Keep a Changelog kind": {
			changelog: head + "## [Unreleased]\n\n### Improved\n\n- Faster.\n",
			version:   "0.1.0", wantErr: "### Improved is none of",
		},
		"refuses prose among the changes, which would be lost": {
			changelog: head + "## [Unreleased]\n\n### Added\n\n- One.\n\nA paragraph.\n",
			version:   "0.1.0", wantErr: ":11: neither a heading",
		},
		"refuses a section with no change": {
			changelog: head + "## [Unreleased]\n\nNothing yet.\n",
			version:   "0.1.0", wantErr: "lists no change",
		},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "CHANGELOG.md")
			writeTestFile(t, file, c.changelog)
			got, err := changelogChanges(file, c.version, "https://h/blob/main/")
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("changes\n%+v\nwant\n%+v", got, c.want)
			}
		})
	}
}

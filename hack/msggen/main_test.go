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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The generated catalogue is what messages.json makes now.
func TestCatalogueIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	cat, err := Load(filepath.Join(root, "internal", "pages", "messages.json"))
	if err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile(filepath.Join(root, "hack", "boilerplate.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Render(header, cat)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "internal", "pages", "zz_generated.messages.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Error("internal/pages/zz_generated.messages.go is stale: run make generate")
	}
}

// A catalogue a page could not use is refused with the text's name.
func TestLoadRefuses(t *testing.T) {
	for body, want := range map[string]string{
		`{"groups":[{"messages":[{"name":"A","en":"x"}]}]}`:                                         "A needs both an en and a ja text",
		`{"groups":[{"messages":[{"name":"A","en":"x","ja":"y"},{"name":"A","en":"x","ja":"y"}]}]}`: "A is named twice",
		`{"groups":[{"messages":[{"en":"x","ja":"y"}]}]}`:                                           `a text has no name ("x")`,
		`{"groups":[{"messages":[{"name":"A","en":"x","ja":"y","fr":"z"}]}]}`:                       `unknown field "fr"`,
		`{"groups":[{"messages":[{"name":"A","en":"%s of %d","ja":"%d の %s"}]}]}`:                   "A: en takes [%s %d], ja [%d %s]",
		`{"groups":[{"messages":[{"name":"A","en":"at %s","ja":"時刻"}]}]}`:                           "A: en takes [%s], ja []",
	} {
		path := filepath.Join(t.TempDir(), "messages.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) = %v, want %q", body, err, want)
		}
	}
}

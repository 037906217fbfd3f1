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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/upstream"
)

// The sandbox serves every upstream the operator knows: an upstream with
// no emulator would leave the demo and the e2e walk calling the real
// service.
func TestEveryUpstreamHasAnEmulator(t *testing.T) {
	// Served otherwise, and why.
	otherwise := map[upstream.Name]string{
		upstream.GoogleAccounts: "the Google OAuth emulator serves its consent page (googleoauth.authorize) under this prefix",
		upstream.S3:             "a real S3 server (versitygw) stands in for S3, not an emulator",
	}
	var sd seed
	s, calendar := sd.sandbox(time.Hour)
	defer calendar.Close()
	routes := s.Routes() // named <upstream>.<route>
	for _, n := range upstream.Names() {
		if otherwise[n] != "" {
			continue
		}
		if !slices.ContainsFunc(routes, func(r string) bool { return strings.HasPrefix(r, string(n)+".") }) {
			t.Errorf("no emulator of cmd/sandbox serves the upstream %s (routes: %v)", n, routes)
		}
	}
}

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

// Package notionid knows the shape of Notion's object ids, a fact of
// Notion's API that the client, the webhook route and the sandbox's
// emulator share; it imports nothing of the operator.
package notionid

import (
	"regexp"
	"strings"
)

// Notion ids are UUIDs, written with or without dashes and in either case
// (a page URL carries them undashed).
var shape = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)

// Normalize returns a Notion id in its dashed lower-case form, or "" when
// s is not one.
func Normalize(s string) string {
	if !shape.MatchString(s) {
		return ""
	}
	h := strings.ToLower(strings.ReplaceAll(s, "-", ""))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

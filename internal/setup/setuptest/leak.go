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

// Package setuptest helps tests prove that no token value reaches a log,
// a status or an Event.
package setuptest

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"sort"
	"strings"
)

// Find returns the names of the tokens whose value appears in text, as
// written or in any of the forms the Kubernetes API carries it in: base64
// (a Secret's data in JSON), standard or URL alphabet, at any alignment
// inside a longer encoded value; or raw inside a hex dump, the form
// client-go logs a protobuf body in (hex.Dump: a value spans its lines).
// Values shorter than 12 bytes are not searched: their encodings would
// match by chance.
func Find(text string, tokens map[string]string) []string {
	text += "\n" + undump(text)
	var found []string
	for name, value := range tokens {
		if len(value) < 12 {
			continue
		}
		for _, form := range Forms(value) {
			if strings.Contains(text, form) {
				found = append(found, name)
				break
			}
		}
	}
	sort.Strings(found)
	return found
}

// Forms lists the substrings that betray value: the value itself, and for
// each of the three alignments a value can have inside base64 text, the
// characters that depend on the value's bytes alone.
func Forms(value string) []string {
	forms := []string{value}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for lead := range 3 {
			e := enc.EncodeToString(append(make([]byte, lead), value...))
			start := 0
			if lead > 0 {
				start = 4 // the first quantum mixes in the bytes before the value
			}
			if end := len(e) - 4; end > start { // so may the last, with the bytes after it
				forms = append(forms, e[start:end])
			}
		}
	}
	return forms
}

// dumpLine is one line of hex.Dump: an offset, up to 16 bytes in hex, and
// their printable form.
var dumpLine = regexp.MustCompile(`[0-9a-f]{8}  ((?:[0-9a-f]{2} {1,2}){1,16}) *\|`)

// undump decodes the bytes of every hex dump in text, in order.
func undump(text string) string {
	var b strings.Builder
	for _, m := range dumpLine.FindAllStringSubmatch(text, -1) {
		raw, err := hex.DecodeString(strings.ReplaceAll(m[1], " ", ""))
		if err == nil {
			b.Write(raw)
		}
	}
	return b.String()
}

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

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Partial responses (the fields parameter) of the Sheets emulator.

// writePartial answers v, cut down to the request's "fields" mask (a
// partial response): "multiple different fields are comma-separated and
// subfields are dot-separated. Field names can be specified in camelCase
// or separated_by_underscores. For convenience, multiple subfields from
// the same type can be listed within parentheses." ("Use field masks",
// https://developers.google.com/sheets/api/guides/field-masks); "/" also
// separates subfields and "*" selects everything, as in Google's older
// partial-response syntax
// (https://developers.google.com/webmaster-tools/v1/how-tos/performance).
// Inside lists the mask applies to every element.
func writePartial(w http.ResponseWriter, r *http.Request, v any) {
	fields := r.URL.Query().Get("fields")
	if fields == "" {
		writeJSON(w, http.StatusOK, v)
		return
	}
	mask, err := parseFieldMask(fields)
	if err != nil {
		googleStatusError(w, http.StatusBadRequest, "Invalid field selection "+fields, nil)
		return
	}
	b, _ := json.Marshal(v)
	var generic any
	_ = json.Unmarshal(b, &generic)
	writeJSON(w, http.StatusOK, mask.apply(generic))
}

// fieldMask is a parsed fields parameter: the selected names, each with
// its own sub-selection (nil: all of it).
type fieldMask map[string]fieldMask

func parseFieldMask(s string) (fieldMask, error) {
	p := &maskParser{s: s}
	m := fieldMask{}
	if err := p.list(m); err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
	}
	return m, nil
}

type maskParser struct {
	s string
	i int
}

// list parses "item,item,…" into m.
func (p *maskParser) list(m fieldMask) error {
	for {
		if err := p.item(m); err != nil {
			return err
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return nil
	}
}

// item parses "a.b/c(sub)" into m.
func (p *maskParser) item(m fieldMask) error {
	var path []string
	for {
		start := p.i
		for p.i < len(p.s) && !strings.ContainsRune(",()./", rune(p.s[p.i])) {
			p.i++
		}
		name := strings.TrimSpace(p.s[start:p.i])
		if name == "" {
			return fmt.Errorf("empty field name at %d", start)
		}
		path = append(path, camelCase(name))
		if p.i < len(p.s) && (p.s[p.i] == '.' || p.s[p.i] == '/') {
			p.i++
			continue
		}
		break
	}
	var sub fieldMask
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		sub = fieldMask{}
		if err := p.list(sub); err != nil {
			return err
		}
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return errors.New("unclosed parenthesis")
		}
		p.i++
	}
	m.add(path, sub)
	return nil
}

// add selects path in m, with sub under its last name.
func (m fieldMask) add(path []string, sub fieldMask) {
	if len(path) == 0 {
		return
	}
	name, rest := path[0], path[1:]
	node, ok := m[name]
	if ok && node == nil {
		return // already selected whole
	}
	if len(rest) == 0 && sub == nil {
		m[name] = nil
		return
	}
	if node == nil {
		node = fieldMask{}
	}
	if len(rest) > 0 {
		node.add(rest, sub)
	} else {
		for k, v := range sub {
			node.add([]string{k}, v)
		}
	}
	m[name] = node
}

func (m fieldMask) apply(v any) any {
	if m == nil {
		return v
	}
	if _, all := m["*"]; all && len(m) == 1 && m["*"] == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range m {
			if k == "*" {
				for kk, vv := range x {
					if _, named := out[kk]; !named {
						out[kk] = sub.apply(vv)
					}
				}
				continue
			}
			if vv, ok := x[k]; ok {
				out[k] = sub.apply(vv)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = m.apply(e)
		}
		return out
	default:
		return v
	}
}

func camelCase(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

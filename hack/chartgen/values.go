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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// The README's table sits between these markers.
const (
	tableBegin = "<!-- values:begin -->"
	tableEnd   = "<!-- values:end -->"
)

// row is one documented value.
type row struct {
	key, typ, def, doc string
}

// valuesTable regenerates the table of values in the chart's README from
// the "# -- description" comments of values.yaml. A value with no such
// comment is an error, so every value the chart takes is documented.
func valuesTable(valuesFile, readme string) error {
	raw, err := os.ReadFile(valuesFile) //nolint:gosec // a file of this repository
	if err != nil {
		return err
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", valuesFile, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yamlv3.MappingNode {
		return fmt.Errorf("%s: not a mapping", valuesFile)
	}
	var rows []row
	if err := walk(doc.Content[0], "", &rows); err != nil {
		return fmt.Errorf("%s: %w", valuesFile, err)
	}
	var t strings.Builder
	t.WriteString(tableBegin + "\n")
	t.WriteString("<!-- " + fmt.Sprintf(generatedNotice, "values.yaml") + " -->\n\n")
	t.WriteString("| Key | Type | Default | Description |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&t, "| `%s` | %s | %s | %s |\n", r.key, r.typ, cell(r.def), cell(r.doc))
	}
	t.WriteString(tableEnd)

	old, err := os.ReadFile(readme) //nolint:gosec // a file of this repository
	if err != nil {
		return err
	}
	begin, end := bytes.Index(old, []byte(tableBegin)), bytes.Index(old, []byte(tableEnd))
	if begin < 0 || end < begin {
		return fmt.Errorf("%s: no %s … %s markers", readme, tableBegin, tableEnd)
	}
	out := append(append(append([]byte{}, old[:begin]...), t.String()...), old[end+len(tableEnd):]...)
	return writeIfChanged(readme, out)
}

// walk documents the pairs of a mapping. A commented key whose value holds
// no commented key is one row with its whole value as the default; other
// mappings are walked into.
func walk(m *yamlv3.Node, prefix string, rows *[]row) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := prefix + k.Value
		doc := description(k.HeadComment)
		if v.Kind == yamlv3.MappingNode && hasDoc(v) {
			if err := walk(v, key+".", rows); err != nil {
				return err
			}
			continue
		}
		if doc == "" {
			return fmt.Errorf("line %d: %s has no \"# --\" comment", k.Line, key)
		}
		def, err := defaultOf(v)
		if err != nil {
			return fmt.Errorf("line %d: %s: %w", k.Line, key, err)
		}
		*rows = append(*rows, row{key: key, typ: typeOf(v), def: def, doc: doc})
	}
	return nil
}

// hasDoc reports whether any key below n carries a "# --" comment.
func hasDoc(n *yamlv3.Node) bool {
	if n.Kind != yamlv3.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if description(n.Content[i].HeadComment) != "" || hasDoc(n.Content[i+1]) {
			return true
		}
	}
	return false
}

// description is the text from the last "# --" line of a comment on.
func description(comment string) string {
	lines := strings.Split(comment, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "# --") {
			start = i
		}
	}
	if start < 0 {
		return ""
	}
	var words []string
	for i, l := range lines[start:] {
		l = strings.TrimPrefix(strings.TrimSpace(l), "#")
		if i == 0 {
			l = strings.TrimPrefix(strings.TrimSpace(l), "--")
		}
		if l = strings.TrimSpace(l); l != "" {
			words = append(words, l)
		}
	}
	return strings.Join(words, " ")
}

func typeOf(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.MappingNode:
		return "object"
	case yamlv3.SequenceNode:
		return "list"
	}
	switch n.Tag {
	case "!!int":
		return "int"
	case "!!float":
		return "number"
	case "!!bool":
		return "bool"
	}
	return "string"
}

// defaultOf renders a value as compact JSON (strings quoted).
func defaultOf(n *yamlv3.Node) (string, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", errors.Join(errors.New("default not representable as JSON"), err)
	}
	return "`" + string(b) + "`", nil
}

// cell keeps a table cell on one line and its pipes literal.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

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

package resmetrics

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// page writes the text format, buffered; num is the scratch a value is
// formatted in.
type page struct {
	w   *bufio.Writer
	num []byte
}

// sent is the response, counting what has gone out to it.
type sent struct {
	w io.Writer
	n int
}

func (s *sent) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	s.n += n
	return n, err
}

func (p *page) header(name, typ, help string) {
	fmt.Fprintf(p.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// sample writes one sample: labels are name, value pairs. A bufio.Writer's
// error sticks: ServeHTTP's Flush meets it.
func (p *page) sample(name string, v float64, labels ...string) {
	w := p.w
	_, _ = w.WriteString(name)
	if len(labels) > 0 {
		_ = w.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				_ = w.WriteByte(',')
			}
			_, _ = w.WriteString(labels[i])
			_, _ = w.WriteString(`="`)
			escape(w, labels[i+1])
			_ = w.WriteByte('"')
		}
		_ = w.WriteByte('}')
	}
	_ = w.WriteByte(' ')
	p.num = strconv.AppendFloat(p.num[:0], v, 'g', -1, 64)
	_, _ = w.Write(p.num)
	_ = w.WriteByte('\n')
}

// escape writes a label value as the text format quotes it: backslash,
// double quote and line feed escaped.
func escape(w *bufio.Writer, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			_, _ = w.WriteString(`\\`)
		case '"':
			_, _ = w.WriteString(`\"`)
		case '\n':
			_, _ = w.WriteString(`\n`)
		default:
			_ = w.WriteByte(c)
		}
	}
}

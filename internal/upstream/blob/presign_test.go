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

package blob_test

import (
	"mime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/internal/upstream/blob"
)

func TestContentDisposition(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"keeps a plain name", "report.pdf", `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`},
		{"encodes spaces and Japanese", "賞品 一覧.zip", `attachment; filename="__ __.zip"; filename*=UTF-8''%E8%B3%9E%E5%93%81%20%E4%B8%80%E8%A6%A7.zip`},
		{"replaces quotes and backslashes in the ASCII form", `a"b\c.txt`, `attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`},
		{"drops CR and LF, which would end the header", "a\r\nSet-Cookie: x.txt", `attachment; filename="aSet-Cookie: x.txt"; filename*=UTF-8''aSet-Cookie%3A%20x.txt`},
		{"names an empty file download", "", `attachment; filename="download"; filename*=UTF-8''download`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := blob.ContentDisposition(tc.file); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// FuzzContentDisposition: any name gives a header that parses as an
// attachment whose name is the input, less control characters.
func FuzzContentDisposition(f *testing.F) {
	for _, s := range []string{"a.pdf", "賞品 一覧.zip", `a"b\c`, "x\r\ny", "%41", "\xff\xfe", "😀.png"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		h := blob.ContentDisposition(name)
		if strings.ContainsAny(h, "\r\n\x00") {
			t.Fatalf("header %q holds a control character", h)
		}
		disp, params, err := mime.ParseMediaType(h)
		if err != nil || disp != "attachment" {
			t.Fatalf("%q parses to %q, %v", h, disp, err)
		}
		want := strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, strings.ToValidUTF8(name, "_"))
		if want == "" {
			want = "download"
		}
		if params["filename"] != want || !utf8.ValidString(params["filename"]) {
			t.Fatalf("%q gives the name %q, want %q", name, params["filename"], want)
		}
	})
}

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

package gsheets

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestQuoteTitleAndRange(t *testing.T) {
	for title, want := range map[string]string{
		"Sheet1":   "'Sheet1'",
		"It's":     "'It''s'",
		"勤怠 ログ":    "'勤怠 ログ'",
		"A1":       "'A1'",
		"a!b":      "'a!b'",
		"''":       "''''''",
		"My Sheet": "'My Sheet'",
	} {
		if got := QuoteTitle(title); got != want {
			t.Errorf("QuoteTitle(%q) = %s, want %s", title, got, want)
		}
	}
	if got := Range("It's", "F:F"); got != "'It''s'!F:F" {
		t.Errorf("Range = %s", got)
	}
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		in       string
		title    string
		from, to Cell
	}{
		{"Sheet1!A5:I7", "Sheet1", Cell{1, 5}, Cell{9, 7}},
		{"'It''s'!A5:J5", "It's", Cell{1, 5}, Cell{10, 5}},
		{"'x'!A5", "x", Cell{1, 5}, Cell{1, 5}},
		{"'勤怠 ログ'!A2:C3", "勤怠 ログ", Cell{1, 2}, Cell{3, 3}},
		{"'a!b'!B2", "a!b", Cell{2, 2}, Cell{2, 2}},
		{"'A1'!ZZZ10", "A1", Cell{18278, 10}, Cell{18278, 10}},
		{"勤怠!A1", "勤怠", Cell{1, 1}, Cell{1, 1}},
		{"A1:B2", "", Cell{1, 1}, Cell{2, 2}},
		{"Sheet1!F:F", "Sheet1", Cell{Col: 6}, Cell{Col: 6}},
		{"Sheet1!3:3", "Sheet1", Cell{Row: 3}, Cell{Row: 3}},
		{"Sheet1!A5:A", "Sheet1", Cell{1, 5}, Cell{Col: 1}},
		{"'My Custom Sheet'", "My Custom Sheet", Cell{}, Cell{}},
	}
	for _, c := range cases {
		title, from, to, err := ParseRange(c.in)
		if err != nil || title != c.title || from != c.from || to != c.to {
			t.Errorf("ParseRange(%q) = %q %v %v %v; want %q %v %v", c.in, title, from, to, err, c.title, c.from, c.to)
			continue
		}
		// What was read renders back to the same range.
		t2, f2, to2, err := ParseRange(formatRange(title, from, to))
		if err != nil || t2 != title || f2 != from || to2 != to {
			t.Errorf("%q → %q does not read back: %q %v %v %v", c.in, formatRange(title, from, to), t2, f2, to2, err)
		}
	}
	for _, bad := range []string{
		"", "Sheet1", "A", "5", "'x", "'x'A1", "''!A1", "!A1", "it's!A1", "Sheet1!", "Sheet1!A0",
		"Sheet1!A05", "Sheet1!a1", "Sheet1!$A$1", "Sheet1!AAAA1", "Sheet1!A1:", "Sheet1!5:A7",
		"Sheet1!A:B7", "Sheet1!A1:B2:C3", "Sheet1!A99999999999", "x!y!A1",
	} {
		if _, _, _, err := ParseRange(bad); !errors.Is(err, ErrBadRange) {
			t.Errorf("ParseRange(%q) = %v, want ErrBadRange", bad, err)
		}
	}
}

func TestColumnLetters(t *testing.T) {
	for n, want := range map[int]string{1: "A", 2: "B", 26: "Z", 27: "AA", 52: "AZ", 53: "BA", 702: "ZZ", 703: "AAA", 18278: "ZZZ", 0: "", -1: "", 18279: ""} {
		if got := ColumnLetters(n); got != want {
			t.Errorf("ColumnLetters(%d) = %q, want %q", n, got, want)
		}
	}
	for n := 1; n <= maxColumn; n++ {
		if got, err := ColumnIndex(ColumnLetters(n)); err != nil || got != n {
			t.Fatalf("ColumnIndex(ColumnLetters(%d)) = %d, %v", n, got, err)
		}
	}
	for _, bad := range []string{"", "a", "AAAA", "A1", "Ä"} {
		if _, err := ColumnIndex(bad); !errors.Is(err, ErrBadRange) {
			t.Errorf("ColumnIndex(%q) = %v, want ErrBadRange", bad, err)
		}
	}
}

func TestSerial(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	cases := []struct {
		name string
		t    time.Time
		loc  *time.Location
		want float64
	}{
		{"epoch", time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC), time.UTC, 0},
		// "January 1st 1900 at noon would be 2.5" and "February 1st 1900
		// at 3pm would be 33.625" (DateTimeRenderOption reference).
		{"Google's first example", time.Date(1900, 1, 1, 12, 0, 0, 0, time.UTC), time.UTC, 2.5},
		{"Google's second example", time.Date(1900, 2, 1, 15, 0, 0, 0, time.UTC), time.UTC, 33.625},
		// 1900 is not a leap year: no 29 February (Lotus's serial 60).
		{"after February 1900", time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC), time.UTC, 61},
		{"a day in UTC", time.Date(2026, 4, 1, 15, 30, 0, 0, time.UTC), time.UTC, 46113 + 15.5/24},
		// The same instant is 00:30 the next day on a Tokyo sheet.
		{"the same instant in Tokyo", time.Date(2026, 4, 1, 15, 30, 0, 0, time.UTC), tokyo, 46114 + 0.5/24},
		{"nil location is UTC", time.Date(2026, 4, 1, 0, 0, 0, 0, tokyo), nil, 46113 - 9.0/24},
		{"before the epoch", time.Date(1899, 12, 29, 12, 0, 0, 0, time.UTC), time.UTC, -0.5},
		{"far future", time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC, 219148},
	}
	for _, c := range cases {
		if got := Serial(c.t, c.loc); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: Serial = %.10f, want %.10f", c.name, got, c.want)
		}
	}
}

// FuzzParseRange checks that ParseRange never panics and that whatever it
// accepts renders back to a range it reads as the same.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{
		"Sheet1!A5:I7", "'It''s'!A5:J5", "'x'!A5", "A1", "'勤怠 ログ'!A:A", "'a!b'!3:3",
		"Sheet1!A5:A", "'x'", "''''!A1", "'", "!", ":", "A1:", "ZZZ2147483647",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		title, from, to, err := ParseRange(s)
		if err != nil {
			return
		}
		again := formatRange(title, from, to)
		t2, f2, to2, err := ParseRange(again)
		if err != nil || t2 != title || f2 != from || to2 != to {
			t.Fatalf("%q read as %q %v %v, rendered %q, read back as %q %v %v (%v)", s, title, from, to, again, t2, f2, to2, err)
		}
	})
}

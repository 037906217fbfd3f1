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

package notionid

import "testing"

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5f":      "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
		"1C2D3E4F-5A6B-4C7D-8E9F-0A1B2C3D4E5F":  "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
		"nope":                                  "",
		"1c2d3e4f5a6b4c7d8e9f0a1b2c3d4e5":       "",
		"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5fz": "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

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

package scenario

// kit is what one kind's sample needs in the walk besides what the walk
// creates for the kinds it was written with: the Secrets the sample
// names, with values the sandbox's emulators accept. A new kind declares
// its kit in a file of its own here (var _ = declareKit(kit{…})), so the
// walk applies its sample and finds it Ready without an edit of the walk;
// its emulator is in the sandbox as it is built (sandbox.WithUnseeded).
type kit struct {
	secrets func(d *Demo) map[string]map[string]string
}

// kits are the declared kits.
var kits []kit

// declareKit adds k to the walk.
func declareKit(k kit) bool { //nolint:unparam // its result lets a file declare a kit as var _ = declareKit(…), without an init function
	kits = append(kits, k)
	return true
}

// The SheetConnection sample's kit: its ingest token (the walk's own
// connection, made in the sheets step, has another).
var _ = declareKit(kit{secrets: func(*Demo) map[string]map[string]string {
	return map[string]map[string]string{"sheet-ingest": {"token": "demo-ingest-token-0123456789abcdef"}}
}})

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

package gitops_test

import (
	"context"

	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// kit is what one kind's sample needs in this suite beyond what the suite
// starts for the kinds it was written with: the emulators its controller
// calls (with the clients and data the sample's Secrets name), and those
// Secrets, made for each fixture. A new kind declares its kit in a file
// of its own here (var _ = declareKit(kit{…})), so that "every sample
// becomes Current" holds it without an edit of the suite.
type kit struct {
	emulators []sandbox.Emulator
	// secrets prepares what the sample needs in f (upstream data) and
	// answers the Secrets it names.
	secrets func(ctx context.Context, f *fixture) (map[string]map[string]string, error)
}

// kits are the declared kits.
var kits []kit

// declareKit adds k to the suite.
func declareKit(k kit) bool {
	kits = append(kits, k)
	return true
}

// kitEmulators are every kit's emulators.
func kitEmulators() []sandbox.Emulator {
	var out []sandbox.Emulator
	for _, k := range kits {
		out = append(out, k.emulators...)
	}
	return out
}

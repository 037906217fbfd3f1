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

// Command provenance writes the SLSA provenance and digests.txt of a
// release for hack/sign-release.sh (docs/release.md, "Signatures and
// provenance"), and reads image layouts for it:
//
//	provenance layout images/manager.tar
//	    prints the digest of the one image or image index the OCI layout
//	    tarball holds, and its platforms (os/arch,…)
//	provenance write --dir RELEASE_DIR --predicate FILE --image REF@DIGEST… --chart REF@DIGEST --blob PATH… [flags]
//	    writes FILE (the SLSA v1 predicate cosign attest and attest-blob
//	    sign), RELEASE_DIR/provenance.intoto.json (the same predicate in an
//	    in-toto statement whose subjects are every image, the chart and
//	    every file) and RELEASE_DIR/digests.txt (each artifact, its digest
//	    and the cosign commands that verify it)
//
// The JSON is written here rather than by a provenance library so the
// repository takes no new module for it; internal/signed holds the
// types, which the release's tests read back.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: provenance layout TAR | provenance write [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "layout":
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: provenance layout TAR")
			os.Exit(2)
		}
		var l Layout
		if l, err = ReadLayout(os.Args[2]); err == nil {
			fmt.Println(l.Digest, l.PlatformList())
		}
	case "write":
		err = write(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "provenance:", err)
		os.Exit(1)
	}
}

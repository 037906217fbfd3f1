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

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// checkWebhook shows that the webhook server refuses what it must, in the
// common error format.
func checkWebhook(base string) error {
	check := func(what string, resp *http.Response, err error, status int, code string) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status || !bytes.Contains(body, []byte(`"code":"`+code+`"`)) {
			return fmt.Errorf("%s: got %d %s, want %d %s", what, resp.StatusCode, body, status, code)
		}
		fmt.Printf("    %-28s → %d %s\n", what, resp.StatusCode, strings.TrimSpace(string(body)))
		return nil
	}
	big := bytes.Repeat([]byte("x"), 2<<20)
	resp, err := http.Post(base+"/notion/webhook", "application/json", bytes.NewReader(big))
	if err := check("a 2 MiB body", resp, err, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE"); err != nil {
		return err
	}
	resp, err = http.Get(base + "/no/such/route")
	if err := check("an unknown path", resp, err, http.StatusNotFound, "NOT_FOUND"); err != nil {
		return err
	}
	// Metrics and probes have their own listeners, off the public port.
	resp, err = http.Get(base + "/metrics")
	if err := check("/metrics on the public port", resp, err, http.StatusNotFound, "NOT_FOUND"); err != nil {
		return err
	}
	return nil
}

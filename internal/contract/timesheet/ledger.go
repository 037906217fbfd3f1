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

package timesheet

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/capability"
)

// The ledger is what outlives a Succeeded SheetSync's retention: the row
// each collected session was written to, so that the tracker still reads
// "succeeded, row N" for it (seed 004 §2: the sync log is unique per
// connection and session). The SheetSync controller adds a session when
// it collects its SheetSync; the ingest route's session reads look it up.
// A session posted again after its SheetSync was collected is not
// appended twice either way: the SheetSync controller looks a new session
// up in the sheet before its first append.
//
// It is kept compact, in LedgerShards Secrets per connection in the
// webhook's namespace (the only Secrets the webhook may read, and it
// holds no token): each entry is 12 bytes, the first 8 bytes of the
// SHA-256 of the session id and the row as a uint32, sorted, so 100,000
// sessions take 1.2 MB in 16 Secrets of about 75 kB. Two session ids
// share a key with a chance of about n²/2⁶⁵ (3·10⁻¹⁰ at 100,000). The
// ledger names the spreadsheet and sheet it records: a connection
// pointed at another sheet starts a new one.

// LedgerShards is how many Secrets hold one connection's ledger.
const LedgerShards = 16

// LedgerLabel marks a ledger Secret; its value names the connection
// (a hash of its namespace and name).
const LedgerLabel = "switchboard.dev/sheets-ledger"

// Keys of a ledger Secret.
const (
	ledgerKeySheet = "sheet"
	ledgerKeyRows  = "rows"
)

// ledgerEntry is the size of one entry: an 8-byte key and a 4-byte row.
const ledgerEntry = 12

// LedgerConnection is the LedgerLabel value of a connection.
func LedgerConnection(namespace, connection string) string {
	return capability.Hash("sheets-ledger:" + namespace + "/" + connection)[:32]
}

// sessionKey is a session's key in the ledger.
func sessionKey(sessionID string) []byte {
	sum := sha256.Sum256([]byte("sheets-session:" + sessionID))
	return sum[:8]
}

// LedgerName is the Secret holding the shard of a connection's ledger
// that holds sessionID.
func LedgerName(namespace, connection, sessionID string) string {
	return fmt.Sprintf("sheets-ledger-%s-%x", LedgerConnection(namespace, connection)[:24], sessionKey(sessionID)[0]%LedgerShards)
}

// ledgerSheet names the sheet c writes to, as the ledger records it.
func ledgerSheet(c *v1alpha1.SheetConnection) string {
	s := c.Spec.SpreadsheetID + "/"
	if c.Spec.Sheet.ID != nil {
		return s + "id:" + strconv.FormatInt(*c.Spec.Sheet.ID, 10)
	}
	return s + "title:" + c.Spec.Sheet.Title
}

// find is the index of key in rows (sorted entries), and whether it is
// there.
func find(rows, key []byte) (int, bool) {
	n := len(rows) / ledgerEntry
	i := sort.Search(n, func(i int) bool { return bytes.Compare(rows[i*ledgerEntry:i*ledgerEntry+8], key) >= 0 })
	return i, i < n && bytes.Equal(rows[i*ledgerEntry:i*ledgerEntry+8], key)
}

// LedgerRow is the row sessionID was written to, as c's ledger shard sec
// records it (ok false: not recorded, or recorded for another sheet).
func LedgerRow(sec *corev1.Secret, c *v1alpha1.SheetConnection, sessionID string) (row int64, ok bool) {
	if sec == nil || string(sec.Data[ledgerKeySheet]) != ledgerSheet(c) {
		return 0, false
	}
	rows := sec.Data[ledgerKeyRows]
	i, found := find(rows, sessionKey(sessionID))
	if !found {
		return 0, false
	}
	return int64(binary.BigEndian.Uint32(rows[i*ledgerEntry+8:])), true
}

// LedgerAdd records in sec (the shard LedgerName names, its Data set
// when it is new) that sessionID of c was written to row; changed is
// false when it was recorded already. A shard recording another sheet is
// started over.
func LedgerAdd(sec *corev1.Secret, c *v1alpha1.SheetConnection, sessionID string, row int64) (changed bool) {
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	if sheet := ledgerSheet(c); string(sec.Data[ledgerKeySheet]) != sheet {
		sec.Data[ledgerKeySheet], sec.Data[ledgerKeyRows] = []byte(sheet), nil
	}
	rows, key := sec.Data[ledgerKeyRows], sessionKey(sessionID)
	i, found := find(rows, key)
	if found {
		return false
	}
	entry := make([]byte, ledgerEntry)
	copy(entry, key)
	binary.BigEndian.PutUint32(entry[8:], uint32(min(max(row, 0), int64(^uint32(0))))) //nolint:gosec // G115: clamped just here
	sec.Data[ledgerKeyRows] = slices.Insert(rows, i*ledgerEntry, entry...)
	return true
}

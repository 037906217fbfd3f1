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

package setup

import (
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// MemoryLimitShare is the share of the container's memory limit that the
// Go runtime is told to stay under at the most (its soft limit,
// GOMEMLIMIT): the garbage collector works harder as the heap nears it,
// instead of letting the heap double past the live objects (GOGC=100)
// into the kernel's OOM kill. The rest is headroom for what the runtime
// does not count.
const MemoryLimitShare = 0.9

// NonGoReserve is what the soft limit leaves, at the least, for the memory
// a binary holds that the Go runtime does not count: its own code and data
// as the kernel maps them in (the resident set's file-backed part), which
// the container's memory counts too. The memory benchmark (hack/bench
// -suite memory) measured the manager's file-backed resident set at 46.5
// MiB at 7,000 objects (the webhook's at 35 MiB), and, at 70,000 objects,
// the manager's whole resident set 52 MiB above the 252 MiB soft limit its
// heap had reached: a reserve of 48 MiB let it pass a 300Mi limit (304
// MiB). 64 MiB leaves the manager 12 MiB to spare there.
const NonGoReserve = 64 << 20

// cgroupLimitFiles are where a container's memory limit is read: cgroup v2,
// then v1. An unlimited v2 says "max"; an unlimited v1 a number near 2^63.
var cgroupLimitFiles = []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"}

// unlimited is the smallest v1 limit read as "no limit": v1 writes the
// largest page-aligned int64 when none is set.
const unlimited = int64(1) << 62

// SetMemoryLimit sets the Go runtime's soft memory limit to
// SoftMemoryLimit of the container's cgroup memory limit, when the
// container has one and GOMEMLIMIT does not already set it, and logs what
// it chose. It answers the limit set (0: none).
func SetMemoryLimit(log logr.Logger) int64 {
	limit := memoryLimit(os.Getenv("GOMEMLIMIT"), os.DirFS("/"))
	if limit > 0 {
		debug.SetMemoryLimit(limit)
		log.Info("Go memory limit set from the container's memory limit", "bytes", limit)
	}
	return limit
}

// memoryLimit is the soft limit to set: none when env (GOMEMLIMIT) is set,
// the runtime having read it, or when root shows no cgroup memory limit.
func memoryLimit(env string, root fs.FS) int64 {
	if env != "" {
		return 0
	}
	for _, name := range cgroupLimitFiles {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 || v >= unlimited {
			// "max", or v1's "no limit".
			return 0
		}
		return SoftMemoryLimit(v)
	}
	return 0
}

// SoftMemoryLimit is the Go runtime's soft memory limit a binary sets in
// a container whose memory limit is containerLimit bytes:
// MemoryLimitShare of it, and NonGoReserve below it at the least, but
// never less than half of it (a container too small for the reserve
// still leaves its heap room).
func SoftMemoryLimit(containerLimit int64) int64 {
	return max(min(int64(float64(containerLimit)*MemoryLimitShare), containerLimit-NonGoReserve), containerLimit/2)
}

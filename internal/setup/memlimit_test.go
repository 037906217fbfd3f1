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
	"testing"
	"testing/fstest"
)

func TestMemoryLimitFollowsTheContainersLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name  string
		env   string
		files map[string]string
		want  int64
	}{
		// 256Mi: 64 MiB below it (a tenth would leave 25.6).
		{"cgroup v2 limit", "", map[string]string{"sys/fs/cgroup/memory.max": "268435456\n"}, 192 * mib},
		// 300Mi, the manager's in the memory benchmark: 64 MiB below it.
		{"the benchmark's manager limit", "", map[string]string{"sys/fs/cgroup/memory.max": "314572800\n"}, 236 * mib},
		// 1Gi: a tenth below it (more than 64 MiB).
		{"cgroup v1 limit", "", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"}, 1024 * mib * 9 / 10},
		// 64Mi: half of it, the floor (64 MiB below would leave nothing).
		{"a limit smaller than twice the reserve", "", map[string]string{"sys/fs/cgroup/memory.max": "67108864\n"}, 32 * mib},
		{"cgroup v2 without a limit", "", map[string]string{"sys/fs/cgroup/memory.max": "max\n"}, 0},
		{"cgroup v1 without a limit", "", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"no cgroup files (not a container)", "", map[string]string{}, 0},
		{"GOMEMLIMIT set by the operator of the pod wins", "200MiB", map[string]string{"sys/fs/cgroup/memory.max": "268435456\n"}, 0},
		{"garbage in the file", "", map[string]string{"sys/fs/cgroup/memory.max": "lots\n"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fstest.MapFS{}
			for name, data := range tc.files {
				root[name] = &fstest.MapFile{Data: []byte(data)}
			}
			if got := memoryLimit(tc.env, root); got != tc.want {
				t.Errorf("memoryLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

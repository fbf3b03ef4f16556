package bot

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// WARM_MAX unset is chosen from the memory available at start-up: one
// warm CLI per 1.6 GiB (a quarter of it at 400 MiB a CLI), at most 4.
func TestWarmMaxFromMemory(t *testing.T) {
	const gb = 1 << 30
	tests := []struct {
		name       string
		configured int
		mem        memInfo
		want       int
		from       string
	}{
		{"configured wins", 7, memInfo{total: 1 * gb, available: gb / 2}, 7, "WARM_MAX"},
		{"unknown memory", 0, memInfo{}, 4, "unknown"},
		{"1 GiB server: none", 0, memInfo{total: 1 * gb, available: 800 << 20}, 0, "0.8 GiB of available memory"},
		{"2 GiB server", 0, memInfo{total: 2 * gb, available: 1700 << 20}, 1, "1.7 GiB"},
		{"4 GiB server", 0, memInfo{total: 4 * gb, available: 3500 << 20}, 2, "3.4 GiB"},
		{"8 GiB, mostly used", 0, memInfo{total: 8 * gb, available: 2 * gb}, 1, "2.0 GiB"},
		{"32 GiB: the old default", 0, memInfo{total: 32 * gb, available: 30 * gb}, 4, "30.0 GiB"},
		{"a container's limit used up", 0, memInfo{total: 1 * gb}, 0, "0.0 GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from := warmMax(tt.configured, tt.mem)
			if got != tt.want || !strings.Contains(from, tt.from) {
				t.Errorf("warmMax(%d, %+v) = %d, %q; want %d, %q", tt.configured, tt.mem, got, from, tt.want, tt.from)
			}
		})
	}
}

func TestMemoryShort(t *testing.T) {
	tests := []struct {
		mem  memInfo
		want bool
	}{
		{memInfo{}, false},
		{memInfo{total: 1000, available: 500}, false},
		{memInfo{total: 1000, available: 99}, true},
	}
	for _, tt := range tests {
		if got := tt.mem.short(); got != tt.want {
			t.Errorf("%+v.short() = %v, want %v", tt.mem, got, tt.want)
		}
	}
}

// GOGC unset is chosen from the memory available at start-up: 400 from
// 4 GiB on, 200 from 2 GiB, Go's own below or where memory is unknown.
func TestGCPercentFromMemory(t *testing.T) {
	const gb = 1 << 30
	tests := []struct {
		name string
		gogc string
		mem  memInfo
		want int
		from string
	}{
		{"GOGC set wins", "50", memInfo{total: 32 * gb, available: 30 * gb}, 0, "GOGC"},
		{"GOGC=off wins", "off", memInfo{total: 32 * gb, available: 30 * gb}, 0, "GOGC"},
		{"unknown memory", "", memInfo{}, 0, "unknown"},
		{"1 GiB server", "", memInfo{total: 1 * gb, available: 800 << 20}, 0, "0.8 GiB"},
		{"2 GiB free", "", memInfo{total: 4 * gb, available: 2 * gb}, 200, "2.0 GiB"},
		{"just under 4 GiB free", "", memInfo{total: 8 * gb, available: 4*gb - 1}, 200, "4.0 GiB"},
		{"4 GiB free", "", memInfo{total: 8 * gb, available: 4 * gb}, 400, "4.0 GiB"},
		{"24 GiB", "", memInfo{total: 24 * gb, available: 23 * gb}, 400, "23.0 GiB"},
		{"a container's limit used up", "", memInfo{total: 8 * gb}, 0, "0.0 GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from := gcPercent(tt.gogc, tt.mem)
			if got != tt.want || !strings.Contains(from, tt.from) {
				t.Errorf("gcPercent(%q, %+v) = %d, %q; want %d, %q", tt.gogc, tt.mem, got, from, tt.want, tt.from)
			}
		})
	}
}

// The memory a bot may use is the machine's within its cgroup's limit: a
// container sees the host's memory in /proc/meminfo.
func TestMemInfoWithinTheCgroupLimit(t *testing.T) {
	const mib = 1 << 20
	meminfo := "MemTotal:       25165824 kB\nMemFree:         1000 kB\nMemAvailable:   20971520 kB\n" // 24 GiB, 20 free
	tests := []struct {
		name  string
		files map[string]string
		want  memInfo
	}{
		{"a machine", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n"},
			memInfo{total: 24 << 30, available: 20 << 30}},
		{"nothing to read", nil, memInfo{}},
		{"a container, cgroup v2", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/memory.max": "1073741824\n", "sys/fs/cgroup/memory.current": "209715200\n"},
			memInfo{total: 1024 * mib, available: 824 * mib}},
		{"no limit, cgroup v2", map[string]string{"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/memory.current": "209715200\n"},
			memInfo{total: 24 << 30, available: 20 << 30}},
		{"a systemd unit's MemoryMax", map[string]string{"proc/meminfo": meminfo,
			"proc/self/cgroup":         "0::/system.slice/jakebot.service\n",
			"sys/fs/cgroup/memory.max": "max\n",
			"sys/fs/cgroup/system.slice/jakebot.service/memory.max":     "2147483648\n",
			"sys/fs/cgroup/system.slice/jakebot.service/memory.current": "0\n"},
			memInfo{total: 2 << 30, available: 2 << 30}},
		{"a container, cgroup v1", map[string]string{"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n", "sys/fs/cgroup/memory/memory.usage_in_bytes": "104857600\n"},
			memInfo{total: 512 * mib, available: 412 * mib}},
		{"a systemd unit's MemoryLimit, cgroup v1", map[string]string{"proc/meminfo": meminfo,
			"proc/self/cgroup":                           "5:cpu,cpuacct:/system.slice/jakebot.service\n4:memory:/system.slice/jakebot.service\n0::/system.slice/jakebot.service\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
			"sys/fs/cgroup/memory/system.slice/jakebot.service/memory.limit_in_bytes": "3221225472\n",
			"sys/fs/cgroup/memory/system.slice/jakebot.service/memory.usage_in_bytes": "1073741824\n"},
			memInfo{total: 3 << 30, available: 2 << 30}},
		{"no limit, cgroup v1", map[string]string{"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n", "sys/fs/cgroup/memory/memory.usage_in_bytes": "104857600\n"},
			memInfo{total: 24 << 30, available: 20 << 30}},
		{"a limit above the machine", map[string]string{"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory.max": "68719476736\n", "sys/fs/cgroup/memory.current": "0\n"},
			memInfo{total: 24 << 30, available: 20 << 30}},
		{"page cache it could give back, cgroup v2", map[string]string{"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory.max": "1073741824\n", "sys/fs/cgroup/memory.current": "943718400\n",
			"sys/fs/cgroup/memory.stat": "anon 104857600\nfile 838860800\nactive_file 104857600\ninactive_file 734003200\n"},
			memInfo{total: 1024 * mib, available: 824 * mib}},
		{"page cache it could give back, cgroup v1", map[string]string{"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n", "sys/fs/cgroup/memory/memory.usage_in_bytes": "419430400\n",
			"sys/fs/cgroup/memory/memory.stat": "cache 314572800\ninactive_file 1\ntotal_inactive_file 314572800\n"},
			memInfo{total: 512 * mib, available: 412 * mib}},
		{"a limit used up", map[string]string{"proc/meminfo": meminfo,
			"sys/fs/cgroup/memory.max": "1073741824\n", "sys/fs/cgroup/memory.current": "2147483648\n"},
			memInfo{total: 1 << 30, available: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, text := range tt.files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := readMemInfoAt(root); got != tt.want {
				t.Errorf("readMemInfoAt = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// SetGCPercent says the target in effect: GOGC's where it is set.
func TestSetGCPercentSaysTheTarget(t *testing.T) {
	t.Setenv("GOGC", "150")
	defer debug.SetGCPercent(debug.SetGCPercent(150))
	if got, from := SetGCPercent(); got != 150 || from != "GOGC" {
		t.Errorf("SetGCPercent() = %d, %q; want 150, GOGC", got, from)
	}
}

// The soft memory limit is half the memory available at start-up, from
// the reading that picks the collector's target; GOMEMLIMIT set wins.
func TestMemLimit(t *testing.T) {
	const gb = 1 << 30
	for _, tt := range []struct {
		name, gomemlimit string
		mem              memInfo
		want             int64
		from             string
	}{
		{"GOMEMLIMIT set wins", "1GiB", memInfo{total: 32 * gb, available: 30 * gb}, 0, "GOMEMLIMIT"},
		{"unknown memory", "", memInfo{}, 0, "unknown"},
		{"a container's limit used up", "", memInfo{total: 8 * gb}, 0, "unknown"},
		{"24 GiB", "", memInfo{total: 24 * gb, available: 20 * gb}, 10 * gb, "half of 20.0 GiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, from := memLimit(tt.gomemlimit, tt.mem); got != tt.want || !strings.Contains(from, tt.from) {
				t.Errorf("memLimit(%q, %+v) = %d, %q; want %d, %q", tt.gomemlimit, tt.mem, got, from, tt.want, tt.from)
			}
		})
	}
}

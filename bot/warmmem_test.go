package bot

import (
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

package hugemem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// anonHuge returns this process's AnonHugePages in bytes.
func anonHuge(t *testing.T) int64 {
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no /proc/self/smaps_rollup (%v): cannot see huge pages", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("AnonHugePages %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Skip("smaps_rollup has no AnonHugePages line: kernel without transparent huge pages")
	return 0
}

// TestReserveBacksHeapWithHugePages: after Reserve, a large allocation
// touched page by page is backed (at least in good part) by 2 MiB pages,
// which under the madvise policy the Go heap otherwise never gets.
func TestReserveBacksHeapWithHugePages(t *testing.T) {
	if p := Policy(); p != "madvise" {
		t.Skipf("transparent huge page policy is %q, not madvise: Reserve does nothing there by design", p)
	}
	if disabled() {
		t.Skipf("%s turns Reserve off in this environment", Env)
	}
	if strictOvercommit() {
		t.Skip("vm.overcommit_memory=2: Reserve does nothing there by design")
	}
	if got := Reserve(512 << 20); got < 256<<20 {
		t.Fatalf("Reserve(512 MiB) advised %d bytes", got)
	}
	before := anonHuge(t)
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := anonHuge(t)
	// The kernel may fall back to small pages when no free 2 MiB page can
	// be found or compacted; a quarter is far above what 4 KiB-only
	// backing (zero) gives and below what a fragmented machine gives.
	if d := after - before; d < 16<<20 {
		t.Fatalf("AnonHugePages grew by %d KiB for a touched 64 MiB allocation; want >= 16 MiB", d>>10)
	}
	b[0] = 2
}

func TestReserveTurnedOffThroughEnv(t *testing.T) {
	for _, v := range []string{"0", "off", "false", "no", " OFF "} {
		t.Setenv(Env, v)
		if got := Reserve(512 << 20); got != 0 {
			t.Errorf("%s=%q: Reserve advised %d bytes, want 0", Env, v, got)
		}
	}
}

func TestForInput(t *testing.T) {
	m := memTotal()
	if m == 0 {
		t.Skip("machine memory unknown")
	}
	limit := min(uint64(16<<30), m/4)
	for _, tc := range []struct {
		name string
		n    int64
		want uint64
	}{
		{"empty input gets the floor", 0, min(256<<20, limit)},
		{"four times the input plus 256 MiB", 100 << 20, min(656<<20, limit)},
		{"huge input is capped", 1 << 50, limit},
		{"unknown size", -1, min(limit, 4<<30)},
	} {
		if got := uint64(ForInput(tc.n)); got != tc.want {
			t.Errorf("%s: ForInput(%d) = %d, want %d", tc.name, tc.n, got, tc.want)
		}
	}
}

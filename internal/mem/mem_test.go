package mem

import (
	"runtime"
	"testing"
)

// TestPopulateKeepsContents: populating changes no byte of the array (it
// only faults pages in), and Make returns a zeroed array of the length
// asked, populated or not.
func TestPopulateKeepsContents(t *testing.T) {
	s := make([]int64, 1<<17) // 1 MiB
	for i := range s {
		s[i] = int64(i) * 7
	}
	ok := Populate(s)
	if runtime.GOOS == "linux" && !ok {
		t.Log("the kernel refused MADV_POPULATE_WRITE (older than 5.14?)")
	}
	for i := range s {
		if s[i] != int64(i)*7 {
			t.Fatalf("s[%d] = %d after Populate, want %d", i, s[i], int64(i)*7)
		}
	}
	if Populate([]byte(nil)) {
		t.Fatal("Populate of an empty slice reported pages faulted in")
	}
	for _, n := range []int{0, 1, 5000, 1 << 18} {
		for _, min := range []uintptr{0, 1 << 20} {
			m := Make[int32](n, min)
			if len(m) != n {
				t.Fatalf("Make(%d, %d) has length %d", n, min, len(m))
			}
			for i, v := range m {
				if v != 0 {
					t.Fatalf("Make(%d, %d)[%d] = %d, want 0", n, min, i, v)
				}
			}
		}
	}
}

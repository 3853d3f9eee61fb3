package graph

import "testing"

// CSRComponents: a 3-cycle, a tail into it, and a node unreachable from the
// allowed roots keep their components; the tail and the cycle differ.
func TestCSRComponents(t *testing.T) {
	// 0->1->2->0, 3->0, 4 isolated
	off := []int32{0, 1, 2, 3, 4, 4}
	to := []int32{1, 2, 0, 0}
	comp, n := CSRComponents(off, to, nil)
	if n != 3 || comp[0] != comp[1] || comp[1] != comp[2] || comp[3] == comp[0] || comp[4] == comp[0] || comp[4] == comp[3] {
		t.Fatalf("comp %v n %d", comp, n)
	}
	comp, n = CSRComponents(off, to, func(v int32) bool { return v != 4 })
	if n != 2 || comp[4] != -1 {
		t.Fatalf("roots filtered: comp %v n %d", comp, n)
	}
}

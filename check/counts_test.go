package check

import (
	"reflect"
	"testing"
)

// TestFinishCounts: Counts is listed plus not listed per type, whatever
// the cap was, with the types' canonical names; Truncated alone (nothing
// listed) still counts; CountsAtLeast is canonicalised and sorted.
func TestFinishCounts(t *testing.T) {
	cases := []struct {
		name      string
		anomalies []string
		truncated map[string]int
		atLeast   []string
		want      map[string]int
		wantLeast []string
	}{
		{"G-single-item-134-listed-8", rep("G-single-item", 8), map[string]int{"G-single-item": 126}, nil,
			map[string]int{"G-single-item": 134}, nil},
		{"lost-update-and-G2-item", []string{"lost-update", "G2-item", "G2-item"}, map[string]int{"G2-item": 3}, nil,
			map[string]int{"lost-update": 1, "G2-item": 5}, nil},
		{"only-truncated-G1c", nil, map[string]int{"G1c": 4}, nil, map[string]int{"G1c": 4}, nil},
		{"alias-GSIb-at-least", []string{"GSIb"}, map[string]int{"GSIb": 2}, []string{"GSIb"},
			map[string]int{"G-SIb": 3}, []string{"G-SIb"}},
		{"nothing-found", nil, nil, nil, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Result{Model: "serializable", Truncated: c.truncated, CountsAtLeast: c.atLeast}
			for _, ty := range c.anomalies {
				r.Anomalies = append(r.Anomalies, Anomaly{Type: ty})
			}
			r.Finish()
			if !reflect.DeepEqual(r.Counts, c.want) {
				t.Errorf("Counts = %v, want %v", r.Counts, c.want)
			}
			if !reflect.DeepEqual(r.CountsAtLeast, c.wantLeast) {
				t.Errorf("CountsAtLeast = %v, want %v", r.CountsAtLeast, c.wantLeast)
			}
		})
	}
}

// TestMaxPerType: 0 is the default cap, negative no cap.
func TestMaxPerType(t *testing.T) {
	for _, c := range []struct{ in, want int }{{0, DefaultMaxPerType}, {-1, NoCap}, {3, 3}} {
		if got := (Options{MaxAnomalies: c.in}).MaxPerType(); got != c.want {
			t.Errorf("MaxAnomalies %d: MaxPerType %d, want %d", c.in, got, c.want)
		}
	}
}

func rep(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestListCapped: at most max anomalies of each type are listed, in their
// order; the rest are counted in Truncated (on top of what it held), and
// Finish counts both.
func TestListCapped(t *testing.T) {
	r := &Result{Model: "serializable", Truncated: map[string]int{"G2-item": 1}}
	var as []Anomaly
	for _, ty := range []string{"G2-item", "G1c", "G2-item", "G2-item", "G1c", "lost-update"} {
		as = append(as, Anomaly{Type: ty})
	}
	r.ListCapped(as, 1)
	var listed []string
	for _, a := range r.Anomalies {
		listed = append(listed, a.Type)
	}
	if want := []string{"G2-item", "G1c", "lost-update"}; !reflect.DeepEqual(listed, want) {
		t.Errorf("listed %v, want %v", listed, want)
	}
	if want := map[string]int{"G2-item": 3, "G1c": 1}; !reflect.DeepEqual(r.Truncated, want) {
		t.Errorf("Truncated = %v, want %v", r.Truncated, want)
	}
	r.Finish()
	if want := map[string]int{"G2-item": 4, "G1c": 2, "lost-update": 1}; !reflect.DeepEqual(r.Counts, want) {
		t.Errorf("Counts = %v, want %v", r.Counts, want)
	}
	r = &Result{}
	r.ListCapped(as, NoCap)
	if len(r.Anomalies) != len(as) || r.Truncated != nil {
		t.Errorf("no cap: listed %d of %d, truncated %v", len(r.Anomalies), len(as), r.Truncated)
	}
}

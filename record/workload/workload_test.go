package workload

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

func TestParseList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		err  bool
	}{
		{"", []int64{}, false},
		{"1", []int64{1}, false},
		{"1,2,30", []int64{1, 2, 30}, false},
		{"1,,2", nil, true},
		{"1,x", nil, true},
		{",", nil, true},
	} {
		got, err := ParseList(tc.in)
		if (err != nil) != tc.err || (!tc.err && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("ParseList(%q) = %v, %v; want %v (err %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"", "1", "1,2,3", "-1,9223372036854775807", "a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseList(s)
		if err != nil {
			return
		}
		// Round trip: what parses re-encodes to an equivalent list.
		parts := make([]string, len(l))
		for i, v := range l {
			parts[i] = strconv.FormatInt(v, 10)
		}
		l2, err := ParseList(strings.Join(parts, ","))
		if err != nil || !reflect.DeepEqual(l, l2) {
			t.Fatalf("round trip of %q: %v vs %v (%v)", s, l, l2, err)
		}
	})
}

type fakeDialect struct{}

func (fakeDialect) Param(i int) string         { return "$" + strconv.Itoa(i) }
func (fakeDialect) Upsert(string, bool) string { return "upsert" }
func (fakeDialect) TextType() string           { return "TEXT" }

// TestPlansHaveTheWorkloadShape checks each workload's plans: op count,
// kinds, and the read-modify-write pairing.
func TestPlansHaveTheWorkloadShape(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s, err := NewShared(Config{Keys: 6, Ops: 5, ReadRatio: 0.5, MaxWritesPerKey: 4})
			if err != nil {
				t.Fatal(err)
			}
			w, err := New(name, fakeDialect{})
			if err != nil {
				t.Fatal(err)
			}
			g := NewGen(s, 1, 0)
			for range 200 {
				p := w.Plan(g)
				if name == "smallbank" || name == "tpcc" {
					if len(p.Args) == 0 {
						t.Fatalf("procedure plan without arguments: %+v", p)
					}
					continue
				}
				if len(p.Ops) != 5 {
					t.Fatalf("%d ops, want 5", len(p.Ops))
				}
				reads, writes := 0, 0
				for i, o := range p.Ops {
					switch o.Kind {
					case history.Read, history.PredRead:
						reads++
					case history.Write, history.Append:
						writes++
					}
					if name == "rmw-register" && o.RMW && o.Kind == history.Write && (i == 0 || p.Ops[i-1].Key != o.Key || !p.Ops[i-1].RMW) {
						t.Fatalf("rmw write %d not preceded by a read of key %d: %+v", i, o.Key, p.Ops)
					}
				}
				switch name {
				case "list-append":
					for _, o := range p.Ops {
						if o.Kind != history.Read && o.Kind != history.Append {
							t.Fatalf("list-append op %v", o.Kind)
						}
					}
				case "blindw-w":
					if reads != 0 {
						t.Fatalf("blindw-w plan reads: %+v", p.Ops)
					}
				case "blindw-rw":
					if reads != 0 && writes != 0 {
						t.Fatalf("blindw-rw plan mixes reads and writes: %+v", p.Ops)
					}
				}
			}
		})
	}
}

// TestKeyRotation: a key retires after MaxWritesPerKey planned writes.
func TestKeyRotation(t *testing.T) {
	s, _ := NewShared(Config{Keys: 1, Ops: 1, MaxWritesPerKey: 3})
	g := NewGen(s, 1, 0)
	var got []int64
	for range 7 {
		got = append(got, g.Key(true))
	}
	if want := []int64{0, 0, 0, 1, 1, 1, 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("keys %v, want %v", got, want)
	}
	if k := g.Key(false); k != 2 {
		t.Fatalf("read key %d, want 2 (reads do not rotate)", k)
	}
}

// TestDistributions: zipfian and hotspot skew towards low slots; uniform
// covers all.
func TestDistributions(t *testing.T) {
	for _, d := range []string{"uniform", "zipfian", "hotspot"} {
		s, err := NewShared(Config{Keys: 10, Dist: d})
		if err != nil {
			t.Fatal(err)
		}
		g := NewGen(s, 3, 1)
		hist := make([]int, 10)
		for range 20000 {
			hist[g.Slot()]++
		}
		first2 := float64(hist[0]+hist[1]) / 20000
		switch d {
		case "uniform":
			for i, n := range hist {
				if n < 1500 || n > 2500 {
					t.Fatalf("uniform slot %d: %d of 20000", i, n)
				}
			}
		case "hotspot":
			if first2 < 0.75 || first2 > 0.85 {
				t.Fatalf("hotspot: %.2f of accesses on the hot 20%%, want ~0.8", first2)
			}
		case "zipfian":
			if hist[0] <= hist[1] || hist[1] <= hist[5] || first2 < 0.4 {
				t.Fatalf("zipfian histogram %v not skewed", hist)
			}
		}
	}
	if _, err := NewShared(Config{Dist: "gauss"}); err == nil {
		t.Fatal("unknown distribution accepted")
	}
	if _, err := NewShared(Config{ReadRatio: 1.5}); err == nil {
		t.Fatal("read ratio 1.5 accepted")
	}
}

func TestUniqueValues(t *testing.T) {
	s, _ := NewShared(Config{})
	seen := map[int64]bool{}
	for range 1000 {
		v := s.Value()
		if seen[v] || v <= 0 {
			t.Fatalf("value %d repeated or not positive", v)
		}
		seen[v] = true
	}
}

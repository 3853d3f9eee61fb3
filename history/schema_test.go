package history

import (
	"fmt"
	"testing"
)

// TestKeyPatternMatch: which keys are rows of a table and the key columns
// they give (schema.go).
func TestKeyPatternMatch(t *testing.T) {
	str := func(s string) Scalar { return Scalar{S: s, IsStr: true} }
	for _, c := range []struct {
		pattern string
		key     Scalar
		want    string // "" no match, else the cells
	}{
		{"ol:{w}:{d}:{o}:{n}", str("ol:1:2:3:4"), "[1 2 3 4]"},
		{"o:{w}:{d}:{o}", str("ol:1:2:3"), ""},
		{"o:{w}:{d}:{o}", str("no:1:2:3"), ""},
		{"o:{w}:{d}:{o}", str("o:1:2:3:4"), `[1 2 "3:4"]`},
		{"o:{w}:{d}", str("o:1:"), ""},
		{"o:{w}:{d}", str("o::1"), ""},
		{"o:{w}", str("o:07"), `["07"]`},
		{"o:{w}", str("o:-3"), "[-3]"},
		{"{id}", Scalar{I: 42}, "[42]"},
		{"{id}", str("abc"), `["abc"]`},
		{"t{id}", Scalar{I: 42}, ""},
		{"{a}-{b}.x", str("p-q.x"), `["p" "q"]`},
		{"{a}-{b}.x", str("p-q.y"), ""},
	} {
		tb := Table{Name: "t", Key: c.pattern}
		cells, ok := tb.Match(c.key, nil)
		got := ""
		if ok {
			got = fmt.Sprint(cells)
		}
		if got != c.want {
			t.Errorf("%s on %v: got %q, want %q", c.pattern, c.key, got, c.want)
		}
	}
}

// TestTableValidate: malformed declarations are rejected.
func TestTableValidate(t *testing.T) {
	for _, tb := range []Table{
		{Name: "", Key: "{a}"},
		{Name: "t", Key: "a"},
		{Name: "t", Key: "{a}{b}"},
		{Name: "t", Key: "{a"},
		{Name: "t", Key: "a}{b}"},
		{Name: "t", Key: "{}"},
		{Name: "t", Key: "{a}", Columns: []string{"A"}},
		{Name: "t", Key: "{a}", Value: "a"},
		{Name: "t", Key: "{a}", Columns: []string{""}},
	} {
		if err := tb.Validate(); err == nil {
			t.Errorf("%+v: no error", tb)
		}
	}
	if err := (&Table{Name: "t", Key: "x:{a}:{b}", Columns: []string{"c"}, Value: "ver"}).Validate(); err != nil {
		t.Error(err)
	}
}

// FuzzKeyPattern: a key pattern never panics; a valid one that matches a
// key gives one cell per key column, and re-rendering the cells into the
// pattern gives the key back (the match is a parse of the key).
func FuzzKeyPattern(f *testing.F) {
	f.Add("ol:{w}:{d}:{o}:{n}", "ol:1:2:3:4")
	f.Add("{a}-{b}.x", "p-q.x")
	f.Add("{id}", "7")
	f.Add("o:{a}}", "o:1")
	f.Fuzz(func(t *testing.T, pattern, key string) {
		tb := Table{Name: "t", Key: pattern}
		cols, err := tb.KeyColumns()
		cells, ok := tb.Match(Scalar{S: key, IsStr: true}, nil)
		if err != nil {
			if ok {
				t.Fatalf("invalid pattern %q matched", pattern)
			}
			return
		}
		if !ok {
			return
		}
		if len(cells) != len(cols) {
			t.Fatalf("%q on %q: %d cells for %d columns", pattern, key, len(cells), len(cols))
		}
		kp, _ := parseKeyPattern(pattern)
		s := kp.lits[0]
		for i, c := range cells {
			if c.V.IsStr {
				s += c.V.S
			} else {
				s += c.V.String()
			}
			s += kp.lits[i+1]
		}
		if s != key {
			t.Fatalf("%q on %q: cells %v render %q", pattern, key, cells, s)
		}
	})
}

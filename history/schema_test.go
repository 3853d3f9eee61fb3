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

package sqlpred

import (
	"math"
	"strings"
	"testing"
)

var kv = []string{"k", "v", "s"}

func row(k, v Value, s Value) []Value { return []Value{k, v, s} }

// TestEval: each case is a WHERE clause on a row (k, v, s) and the SQL
// truth value it must have (three-valued logic, SQL:2016 §8).
func TestEval(t *testing.T) {
	r := row(IntV(5), NullV, StrV("abc"))
	cases := []struct {
		where string
		want  Truth
	}{
		{"k = 5", True},
		{"K=5", True},
		{`"k" = 5`, True},
		{"k <> 5", False},
		{"k != 4", True},
		{"k < 5", False},
		{"k <= 5", True},
		{"5 >= k", True},
		{"k > 4.5", True},
		{"k = 5.0", True},
		{"k BETWEEN 1 AND 5", True},
		{"k NOT BETWEEN 1 AND 5", False},
		{"k BETWEEN 6 AND 1", False},
		{"k IN (1, 2, 5)", True},
		{"k NOT IN (1, 2)", True},
		{"k IN (1, NULL)", Unknown},     // 5 = NULL is UNKNOWN
		{"k IN (5, NULL)", True},        // TRUE OR UNKNOWN
		{"k NOT IN (1, NULL)", Unknown}, // the classic NOT IN trap
		{"v = 1", Unknown},
		{"v <> 1", Unknown},
		{"NOT v = 1", Unknown},
		{"v = 1 AND k = 4", False}, // UNKNOWN AND FALSE
		{"v = 1 AND k = 5", Unknown},
		{"v = 1 OR k = 5", True}, // UNKNOWN OR TRUE
		{"v = 1 OR k = 4", Unknown},
		{"v IS NULL", True},
		{"v IS NOT NULL", False},
		{"k IS NULL", False},
		{"(v = 1) IS NULL", True},
		{"v BETWEEN 1 AND 2", Unknown},
		{"k BETWEEN v AND 10", Unknown},
		{"k BETWEEN v AND 4", False}, // UNKNOWN AND FALSE
		{"s LIKE 'a%'", True},
		{"s LIKE 'a_c'", True},
		{"s LIKE '_b'", False},
		{"s LIKE '%'", True},
		{"s NOT LIKE '%c'", False},
		{"s LIKE 'ab\\%' ", False},
		{"'a%c' LIKE 'a\\%c'", True},
		{"'a%c' LIKE 'a!%c' ESCAPE '!'", True},
		{"s LIKE v", Unknown},
		{"s = 'abc'", True},
		{"s < 'abd'", True},
		{"s || 'd' = 'abcd'", True},
		{"'x' || k = 'x5'", True},
		{"s || v IS NULL", True},
		{"k + 1 = 6", True},
		{"k * 2 - 1 = 9", True},
		{"k / 2 = 2", True}, // integer division truncates
		{"-k / 2 = -2", True},
		{"k % 3 = 2", True},
		{"k / 2.0 = 2.5", True},
		{"-k = -5", True},
		{"- -k = 5", True},
		{"k + v = 1", Unknown},
		{"TRUE", True},
		{"FALSE OR NULL", Unknown},
		{"NOT NULL", Unknown},
		{"NOT (k = 5 AND NOT k = 4)", False},
		{"k = 5 OR 1/0 = 1", True}, // decided on the left
		{"1e1 = 10", True},
		{".5 < k", True},
		{"k = -9223372036854775808", False},
		{"true = (k = 5)", True},
	}
	for _, c := range cases {
		p, err := Compile(c.where, kv)
		if err != nil {
			t.Errorf("%q: %v", c.where, err)
			continue
		}
		got, err := p.Eval(r)
		if err != nil {
			t.Errorf("%q: %v", c.where, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q = %s, want %s", c.where, got, c.want)
		}
		m, _ := p.Matches(r)
		if m != (c.want == True) {
			t.Errorf("%q: Matches = %v with truth %s", c.where, m, got)
		}
	}
}

// TestEvalErrors: type errors, overflow and division by zero are evaluation
// errors, never panics or silent results.
func TestEvalErrors(t *testing.T) {
	r := row(IntV(math.MaxInt64), IntV(0), StrV("abc"))
	for _, where := range []string{
		"k + 1 > 0", "k * 2 > 0", "-k - 2 < 0", "k / v = 1", "k % v = 1", "1.0 / v = 1",
		"s = 1", "s + 1 = 2", "k LIKE 'a'", "s LIKE 'a\\'", "k AND TRUE", "NOT k", "k", "1.5 % 2 = 1",
	} {
		p, err := Compile(where, kv)
		if err != nil {
			continue // rejected statically, also fine
		}
		if got, err := p.Eval(r); err == nil {
			t.Errorf("%q = %s, want an error", where, got)
		}
	}
}

// TestCompileErrors: malformed text is rejected with an offset.
func TestCompileErrors(t *testing.T) {
	for _, where := range []string{
		"", "k =", "k = 'x", "(k = 1", "k = 1)", "x = 1", "k BETWEEN 1", "k IN ()", "k IN 1",
		"k NOT 5", "k IS 5", "k = 1 k = 2", "k # 1", `"" = 1`, "s LIKE 'a' ESCAPE 'ab'", "AND", "1 + 2",
		strings.Repeat("(", MaxDepth+5) + "k = 1" + strings.Repeat(")", MaxDepth+5),
		strings.Repeat("NOT ", MaxDepth+5) + "k = 1",
		strings.Repeat("-", MaxDepth+5) + "k = 1",
		"k = 99999999999999999999e999",
	} {
		if _, err := Compile(where, kv); err == nil {
			t.Errorf("%q compiled, want an error", where)
		} else if _, ok := err.(*Error); !ok {
			t.Errorf("%q: error %T, want *Error", where, err)
		}
	}
}

// TestIntRanges: the region of a predicate on column k.
func TestIntRanges(t *testing.T) {
	cases := []struct {
		where string
		want  Ranges
	}{
		{"k >= 3 AND k <= 7", Ranges{{3, 7}}},
		{"k BETWEEN 3 AND 7", Ranges{{3, 7}}},
		{"3 <= k AND 7 >= k", Ranges{{3, 7}}},
		{"k > 2.5 AND k < 7.5", Ranges{{3, 7}}},
		{"k IN (5, 1, 3, 2)", Ranges{{1, 3}, {5, 5}}},
		{"k = 1 OR k = 2 OR k BETWEEN 10 AND 12", Ranges{{1, 2}, {10, 12}}},
		{"NOT (k < 3 OR k > 7)", Ranges{{3, 7}}},
		{"k NOT BETWEEN 3 AND 7 AND k BETWEEN 0 AND 10", Ranges{{0, 2}, {8, 10}}},
		{"k <> 5 AND k BETWEEN 4 AND 6", Ranges{{4, 4}, {6, 6}}},
		{"k = 2.5", nil},
		{"k = 'x'", nil},
		{"k IS NULL", nil},
		{"k = 1 AND k = 2", nil},
		{"v = 3", Full},
		{"k + 0 = 3", Full},
		{"k NOT IN (1, 2)", Full},
		{"k > 3 OR v = 1", Full},
		{"k > 3 AND v = 1", Ranges{{4, math.MaxInt64}}},
		{"k < -9223372036854775808", nil},
		{"k > 9223372036854775807", nil},
		{"k > 1e300", nil},
	}
	for _, c := range cases {
		p, err := Compile(c.where, kv)
		if err != nil {
			t.Fatalf("%q: %v", c.where, err)
		}
		got := p.IntRanges(0)
		if len(got) != len(c.want) {
			t.Errorf("%q: ranges %v, want %v", c.where, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: ranges %v, want %v", c.where, got, c.want)
				break
			}
		}
	}
}

// FuzzCompileEval: Compile never panics; a compiled predicate evaluates
// without panicking on rows of every type; and IntRanges is sound: an
// integer k outside the region never makes the predicate TRUE.
func FuzzCompileEval(f *testing.F) {
	for _, s := range []string{"k >= 3 AND k <= 7", "k IN (1, 2) OR v IS NULL", "NOT (k BETWEEN 1 AND 4)",
		"s LIKE 'a%b_'", "k * 2 + v / 3 > 7.5", "k <> 4 AND NOT v = 2", "'a' || s = 'ab'", "k NOT IN (3, NULL)"} {
		f.Add(s, int64(3), int64(5))
	}
	f.Fuzz(func(t *testing.T, where string, k, v int64) {
		p, err := Compile(where, kv)
		if err != nil {
			return
		}
		rs := p.IntRanges(0)
		ers, exact := p.IntRangesExact(0)
		for _, r := range [][]Value{
			row(IntV(k), IntV(v), StrV(where)),
			row(IntV(k), NullV, NullV),
			row(IntV(k), FloatV(float64(v)/3), StrV("")),
			row(IntV(k), BoolV(v%2 == 0), IntV(v)),
		} {
			tr, err := p.Eval(r)
			if err == nil && tr == True && !rs.Contains(k) {
				t.Fatalf("%q TRUE at k=%d but region %v excludes it", where, k, rs)
			}
			if exact && err == nil && (tr == True) != ers.Contains(k) {
				t.Fatalf("%q is %s at k=%d but its exact region %v says %v", where, tr, k, ers, ers.Contains(k))
			}
		}
		_, _ = p.Eval(nil)
	})
}

// TestIntRangesExact: exactness holds only for predicates over k alone
// built from comparisons, BETWEEN, IN and IS NULL against literals.
func TestIntRangesExact(t *testing.T) {
	for _, c := range []struct {
		where string
		exact bool
	}{
		{"k >= 2 AND k <= 5", true},
		{"k BETWEEN 1 AND 3 OR k = 7", true},
		{"NOT (k < 2) AND k IN (3, 4)", true},
		{"k >= 2 AND v = 1", false},
		{"k % 2 = 0", false},
		{"k NOT IN (1, 2)", false},
		{"k = v", false},
	} {
		p, err := Compile(c.where, kv)
		if err != nil {
			t.Fatal(err)
		}
		if _, ex := p.IntRangesExact(0); ex != c.exact {
			t.Errorf("%q: exact %v, want %v", c.where, ex, c.exact)
		}
	}
}

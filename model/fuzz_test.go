package model

import "testing"

// FuzzCanonical: name resolution never panics, is idempotent, and every
// resolved name is a known model.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"ser", "SI", "read_committed", "PL-2.99", "", " ", "strong-serializable", "pram", "\x00"} {
		f.Add(s)
	}
	known := map[string]bool{}
	for _, m := range Names() {
		known[m] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := Canonical(s)
		if err != nil {
			return
		}
		if !known[m] {
			t.Fatalf("Canonical(%q) = unknown %q", s, m)
		}
		if m2, err := Canonical(m); err != nil || m2 != m {
			t.Fatalf("Canonical not idempotent: %q -> %q -> %q, %v", s, m, m2, err)
		}
	})
}

// FuzzLookupProfile: profile lookup never panics and resolves to itself.
func FuzzLookupProfile(f *testing.F) {
	for _, s := range []string{"pg:rr", "mysql:REPEATABLE READ", "tidb-optimistic:rr", ":", "a:b:c", "mssql:snapshot"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok := LookupProfile(s)
		if !ok {
			return
		}
		q, ok := LookupProfile(p.Name)
		if !ok || q.Name != p.Name {
			t.Fatalf("LookupProfile(%q) = %q, which does not resolve to itself", s, p.Name)
		}
		_ = Prohibits(s, G2)
	})
}

func BenchmarkProhibits(b *testing.B) {
	as := []string{G0, G1a, GSingleItem, G2Item, LostUpdate, "GSIb", FUW}
	ms := []string{"serializable", "snapshot-isolation", "pg:rr", "mysql:repeatable-read"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = Prohibits(ms[i%len(ms)], as[i%len(as)])
	}
}

func BenchmarkRulesOut(b *testing.B) {
	as := []string{GSingleItem, G2Item, Internal}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = RulesOut(as)
	}
}

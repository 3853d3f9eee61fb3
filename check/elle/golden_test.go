package elle

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/check"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// render prints a result the way a person reads it: verdict, types,
// boundary, and every anomaly's explanation.
func render(r *check.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %v\ntypes: %v\nnot: %v\nalso-not: %v\n", r.Verdict, r.AnomalyTypes, r.Not, r.AlsoNot)
	if r.Reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", r.Reason)
	}
	for _, a := range r.Anomalies {
		fmt.Fprintf(&b, "--- %s (txns %v, key %q, allowed %v)\n%s\n", a.Type, a.Txns, a.Key, a.Allowed, a.Explanation)
		for _, s := range a.Cycle {
			fmt.Fprintf(&b, "  step T%d -%s-> T%d key %q\n", s.From, s.Rel, s.To, s.Key)
		}
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got ---\n%s", path, got)
	}
}

// TestExplanationsGolden pins the text of every explanation for the
// anomaly tables.
func TestExplanationsGolden(t *testing.T) {
	for _, g := range []struct {
		name  string
		c     check.Checker
		cases []caseT
	}{
		{"list-append", ListAppend{}, listAppendCases},
		{"rw-register", RWRegister{}, rwRegisterCases},
	} {
		var b strings.Builder
		for _, tc := range g.cases {
			h := newHB(t).add(tc.txns...).h
			r, err := g.c.Check(context.Background(), h, check.Options{Model: tc.model, Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "=== %s (%s; model %s)\n%s\n", tc.name, tc.def, tc.model, render(r))
		}
		golden(t, g.name, b.String())
	}
}

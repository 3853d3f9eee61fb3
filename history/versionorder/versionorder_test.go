package versionorder

import (
	"errors"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

func hist() *history.History {
	h := history.New()
	x, y := h.Keys.Str("x"), h.Keys.Int(7)
	for i, kv := range [][2]int32{{x, h.Values.Int(1)}, {x, h.Values.Int(2)}, {y, h.Values.Str("a")}, {x, h.Values.Int(3)}} {
		h.Add(history.Txn{Session: -1, ID: string(rune('A' + i)), Ops: []history.Op{{Kind: history.Write, Key: kv[0], Value: kv[1]}}})
	}
	return h
}

func TestRead(t *testing.T) {
	h := hist()
	err := Read(strings.NewReader("\ufeff# order\n\nx 2 1\n7 a\n"), "vo.txt", h)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := h.Keys.LookupStr("x")
	if got := h.VersionOrder[x]; len(got) != 2 || h.ValueName(got[0]) != "2" || h.ValueName(got[1]) != "1" {
		t.Fatalf("x: %v", got)
	}
	if !h.Evidence.VersionOrder {
		t.Fatal("evidence flag not set")
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct{ in, field string }{
		{"z 1\n", "key"},
		{"x 1\nx 2\n", "key"},
		{"x 1 9\n", "version 2"},
		{"x 1 a\n", "version 2"},
		{"x 1 1\n", "version 2"},
	} {
		err := Read(strings.NewReader(c.in), "vo.txt", hist())
		var ie *history.InputError
		if !errors.As(err, &ie) || ie.Field != c.field || ie.File != "vo.txt" || ie.Line == 0 {
			t.Errorf("%q: got %v, want an input error in field %q with file and line", c.in, err, c.field)
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{"x 1 2 3\n7 a\n", "# c\n\nx 3\n", "x 1 1", "\ufeffx", "x\t2\t1\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h := hist()
		err := Read(strings.NewReader(s), "f", h)
		var ie *history.InputError
		if err != nil && !errors.As(err, &ie) {
			t.Fatalf("non-input error %v", err)
		}
		if err == nil {
			for k, c := range h.VersionOrder {
				seen := map[int32]bool{}
				for _, v := range c {
					if seen[v] {
						t.Fatalf("key %d: value %d twice", k, v)
					}
					seen[v] = true
				}
			}
		}
	})
}

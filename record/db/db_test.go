package db

import (
	"testing"
)

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]string{"": Serializable, "SER": Serializable, "read committed": ReadCommitted,
		"rc": ReadCommitted, "REPEATABLE_READ": RepeatableRead, "ru": ReadUncommitted} {
		got, err := ParseLevel(in)
		if err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseLevel("snapshot"); err == nil {
		t.Error("ParseLevel(snapshot) accepted")
	}
}

func TestParseLSN(t *testing.T) {
	a, err := ParseLSN("0/16B3F28")
	if err != nil || a != 0x16B3F28 {
		t.Fatalf("ParseLSN = %x, %v", a, err)
	}
	b, err := ParseLSN("1/0")
	if err != nil || b != 1<<32 || !(a < b) {
		t.Fatalf("ParseLSN(1/0) = %x, %v", b, err)
	}
	for _, bad := range []string{"", "12", "x/1", "1/y", "1/2/3", "100000000/0"} {
		if _, err := ParseLSN(bad); err == nil {
			t.Errorf("ParseLSN(%q) accepted", bad)
		}
	}
}

func FuzzParseLSN(f *testing.F) {
	f.Add("0/16B3F28")
	f.Add("FFFFFFFF/FFFFFFFF")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseLSN(s)
	})
}

func TestGTIDSeq(t *testing.T) {
	if n, ok := gtidSeq("0-1-42"); !ok || n != 42 {
		t.Fatalf("gtidSeq = %d, %v", n, ok)
	}
	for _, bad := range []string{"", "1-1-42", "0-1", "0-1-x"} {
		if _, ok := gtidSeq(bad); ok {
			t.Errorf("gtidSeq(%q) accepted", bad)
		}
	}
}

func TestRedact(t *testing.T) {
	if got := Redact("postgres://u:secret@h:5432/db"); got != "postgres://u:***@h:5432/db" {
		t.Fatalf("redact = %q", got)
	}
}

func TestOpenRejectsUnknownScheme(t *testing.T) {
	if _, err := Open(t.Context(), "oracle://x", Options{}); err == nil {
		t.Fatal("oracle:// accepted")
	}
}

// TestParseLSNBytesAgreesWithParseLSN protects the commit stream's commit
// positions: the raw-column parser the stream uses reads every LSN as
// ParseLSN does and rejects what it rejects.
func TestParseLSNBytesAgreesWithParseLSN(t *testing.T) {
	for _, s := range []string{"0/16B3F28", "1/0", "0/0", "FFFFFFFF/FFFFFFFF", "a/b", "00000001/00000002",
		"", "/", "1/", "/1", "1/2/3", "x/1", "1/x", "100000000/0", "0/100000000", "-1/0", "1 /0"} {
		want, werr := ParseLSN(s)
		got, gerr := parseLSNBytes([]byte(s))
		if (werr == nil) != (gerr == nil) || got != want {
			t.Errorf("parseLSNBytes(%q) = %x, %v; ParseLSN = %x, %v", s, got, gerr, want, werr)
		}
	}
}

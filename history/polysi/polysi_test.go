package polysi

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

func render(h *history.History) string {
	var b strings.Builder
	for i := range h.Txns {
		t := &h.Txns[i]
		fmt.Fprintf(&b, "%s s=%s/%d\n", h.TxnString(int32(i)), h.Sessions.String(t.Session), t.Seq)
	}
	return b.String()
}

func TestGalera(t *testing.T) {
	path := "../../testdata/external/polysi/galera.txt"
	if _, err := os.Stat(path); err != nil {
		t.Fatal("testdata/external missing: it is part of the repository")
	}
	h, err := history.DecodeFile(path, "", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `T0 (1) [w 0 1, w 0 2] s=1/0
T1 (2) [w 0 3, w 0 4] s=1/1
T2 (3) [r 0 4, w 0 5] s=1/2
T3 (4) [r 0 5, r 0 5] s=1/3
T4 (8) [r 0 4, w 0 10] s=2/0
T5 (9) [w 0 11, w 0 12] s=2/1
T6 (10) [w 0 13, w 0 14] s=2/2
`
	if got := render(h); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if h.Header.Format != "polysi" || !h.Evidence.Sessions || h.Evidence.ClientTime {
		t.Errorf("format %q evidence %+v", h.Header.Format, h.Evidence)
	}
	st := h.Stats()
	if st.Committed != 7 || st.Ops != 14 || st.Keys != 1 || st.Sessions != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestDecode(t *testing.T) {
	cases := []struct{ name, src, want, err string }{
		{"reads of 0 are initial reads", "r(1,0,1,1)\nw(1,5,1,1)\n\nr(1,5,2,2)\n",
			"T0 (1) [r 1 nil, w 1 5] s=1/0\nT1 (2) [r 1 5] s=2/0\n", ""},
		{"read of 0 kept when 0 is written", "w(1,0,1,1)\nr(1,0,2,2)\nr(2,0,2,2)\n",
			"T0 (1) [w 1 0] s=1/0\nT1 (2) [r 1 0, r 2 nil] s=2/0\n", ""},
		{"non-adjacent lines of one transaction", "w(1,1,1,7)\nw(2,1,2,8)\nw(3,1,1,7)\n",
			"T0 (7) [w 1 1, w 3 1] s=1/0\nT1 (8) [w 2 1] s=2/0\n", ""},
		{"aborted writes group per session run", "w(1,1,1,-1)\nw(2,1,1,-1)\nw(1,2,2,-1)\nw(1,3,1,5)\nw(1,4,1,-1)\n",
			"T0 (aborted@1) [w 1 1, w 2 1] aborted s=1/0\nT1 (aborted@3) [w 1 2] aborted s=2/0\nT2 (5) [w 1 3] s=1/1\nT3 (aborted@5) [w 1 4] aborted s=1/2\n", ""},
		{"spaces tolerated", " w( 1, 2 ,3,4 ) \r\n", "T0 (4) [w 1 2] s=3/0\n", ""},
		{"garbage line", "w(1,1,1,1)\nx(1,1,1,1)\n", "", "t.txt:2: want r(key,value,session,txn)"},
		{"missing field", "w(1,1,1)\n", "", "t.txt:1: session: expected ','"},
		{"negative key", "w(-1,1,1,1)\n", "", "t.txt:1: key: must not be negative"},
		{"trailing text", "w(1,1,1,1) x\n", "", "t.txt:1: unexpected text"},
		{"txn in two sessions", "w(1,1,1,1)\nw(1,2,2,1)\n", "", "t.txt:2: session: transaction 1 belongs to session 1, not 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Decode(strings.NewReader(c.src), history.DecodeOptions{Name: "t.txt"})
			if c.err != "" {
				if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want InputError containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := render(h); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	if Sniff([]byte("w(0,1,1,1)\nr(0,1,1,2)\n")) != 95 {
		t.Error("PolySI text not recognised")
	}
	for _, s := range []string{"{:type :ok}", "[{\"a\":1}]", "w(0,1,1)", ""} {
		if Sniff([]byte(s)) != 0 {
			t.Errorf("Sniff(%q) != 0", s)
		}
	}
}

func FuzzPolySI(f *testing.F) {
	f.Add([]byte("w(0,1,1,1)\nr(0,1,2,2)\nw(1,1,1,-1)\n"))
	f.Add([]byte("w(0,0,0,0)\nw(1,0,0,0)\nr(0,0,1,1)\nw(1,2,1,1)\nr(1,0,2,2)\n")) // explicit initial transaction
	if b, err := os.ReadFile("../../testdata/external/polysi/galera.txt"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Decode(bytes.NewReader(b), history.DecodeOptions{})
		if err != nil {
			if !history.IsInputError(err) {
				t.Fatalf("non-input error %T: %v", err, err)
			}
			return
		}
		for i := range h.Txns {
			_ = h.TxnString(int32(i))
			if h.Txns[i].Index != int32(i) {
				t.Fatalf("txn %d has Index %d", i, h.Txns[i].Index)
			}
		}
	})
}

// TestExplicitInitialTransaction: the first transaction writing 0 to every
// key is the initial state (removed, its reads become nil reads); a write
// skew between the other two is then visible as two reads of the initial
// state.
func TestExplicitInitialTransaction(t *testing.T) {
	in := "w(0,0,0,0)\nw(1,0,0,0)\nr(0,0,1,1)\nr(1,0,1,1)\nw(0,1,1,1)\nr(0,0,2,2)\nr(1,0,2,2)\nw(1,2,2,2)\n"
	h, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "ws.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := `T0 (1) [r 0 nil, r 1 nil, w 0 1] s=1/0
T1 (2) [r 0 nil, r 1 nil, w 1 2] s=2/0
`
	if got := render(h); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if h.Ignored["explicit initial transaction"] != 1 {
		t.Errorf("ignored: %v", h.Ignored)
	}
	// Not an initial transaction: someone reads 0 of key 1 before... here
	// the first transaction misses key 2, so it stays.
	in2 := "w(0,0,0,0)\nw(1,0,0,0)\nr(0,0,1,1)\nw(2,5,1,1)\n"
	h2, err := Decode(strings.NewReader(in2), history.DecodeOptions{Name: "x.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h2.Txns) != 2 || h2.Txns[1].Ops[0].Value == history.NoValue {
		t.Errorf("initial transaction wrongly dropped:\n%s", render(h2))
	}
}

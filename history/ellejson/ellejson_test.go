package ellejson

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	hedn "github.com/txray/txray/history/edn"
	_ "github.com/txray/txray/history/jsonl"
)

func render(h *history.History) string {
	var b strings.Builder
	for i := range h.Txns {
		t := &h.Txns[i]
		s := "-"
		if t.Session >= 0 {
			s = h.Sessions.String(t.Session)
		}
		fmt.Fprintf(&b, "%s s=%s/%d\n", h.TxnString(int32(i)), s, t.Seq)
	}
	return b.String()
}

func TestSharedTestdata(t *testing.T) {
	dir := "../../testdata/external/elle"
	for _, c := range []struct{ file, want, workload string }{
		{"paper-example.json", `T0 (1) [append 253 1, append 253 3, append 253 4, append 255 2, append 255 3, append 255 4, append 255 5, append 256 1, append 256 2] s=1/0
T1 (3) [append 255 8, r 253 [1 3 4]] s=1/1
T2 (5) [append 256 4, r 255 [2 3 4 5 8], r 256 [1 2 4], r 253 [1 3 4]] s=1/2
T3 (7) [append 250 10, r 253 [1 3 4], r 255 [2 3 4 5], append 256 3] s=1/3
`, "list-append"},
		{"rw-register.json", `T0 (2) [w x 2] s=0/0
T1 (4) [r x 3] s=0/1
T2 (6) [r x 2] s=0/2
`, "rw-register"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Fatal("testdata/external missing: it is part of the repository")
			}
			h, err := history.DecodeFile(path, "", history.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h.Header.Format != "elle-json" {
				t.Errorf("sniffed %q, want elle-json", h.Header.Format)
			}
			if got := render(h); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if h.Header.Workload != c.workload || !h.Evidence.Sessions || !h.Evidence.ClientTime || h.Header.Clock != "history-order" {
				t.Errorf("workload %q evidence %+v", h.Header.Workload, h.Evidence)
			}
			// The EDN twin decodes to the same transactions.
			edn := strings.TrimSuffix(path, ".json") + ".edn"
			h2, err := history.DecodeFile(edn, "edn", history.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if render(h2) != render(h) {
				t.Errorf("EDN twin differs:\n%s", render(h2))
			}
		})
	}
}

func TestDecode(t *testing.T) {
	cases := []struct{ name, src, want, err string }{
		{"json lines with nemesis and info",
			`{"type":"invoke","process":0,"f":"txn","value":[["append","x",1],["r","y",null]],"time":1}
{"type":"info","process":"nemesis","f":"kill","value":null}
{"type":"info","process":0,"f":"txn","value":null,"time":4}`,
			"T0 [append x 1, r y nil] unknown s=0/0\n", ""},
		{"array with whitespace", ` [ {"type":"ok","process":2,"value":[["w",1,"a"]]} ] `, "T0 [w 1 a] s=2/0\n", ""},
		{"bad micro-op", `[{"type":"ok","process":2,"value":[["cas",1,[1,2]]]}]`, "", "x.json:1: value[0]: unsupported micro-op \"cas\" on key 1"},
		{"bad json", "[{\"type\":\"ok\",\n \"value\": [}]", "", "x.json:2: column 12: unexpected '}'"},
		{"duplicate invoke", `{"type":"invoke","process":0,"value":[]}
{"type":"invoke","process":0,"value":[]}`, "", "x.json:2: process: process 0 invokes again"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Decode(strings.NewReader(c.src), history.DecodeOptions{Name: "x.json"})
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
	cases := []struct {
		src  string
		want string
	}{
		{`[{"index":0,"process":1,"type":"invoke","value":[["append",253,1]]}]`, "elle-json"},
		{`{"type":"ok","process":1,"value":[]}` + "\n", "elle-json"},
		{`{"txray":1,"db":"x"}` + "\n" + `{"ops":[],"status":"committed"}`, "jsonl"},
		{`{"id":"a","status":"committed","ops":[{"f":"r","k":1,"v":1}]}`, "jsonl"},
		{`[{"tid":1,"sid":1,"sts":{"p":1,"l":0},"cts":{"p":2,"l":0},"ops":[{"t":"w","k":1,"v":1}]}]`, ""},
		{`{:type :ok :value []}`, "edn"},
	}
	for _, c := range cases {
		if got := history.Sniff([]byte(c.src)); got != c.want && !(c.want == "" && got != "elle-json") {
			t.Errorf("Sniff(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

var _ = hedn.Never

func FuzzElleJSON(f *testing.F) {
	f.Add([]byte(`[{"index":0,"process":1,"type":"invoke","value":[["append",253,1],["r",253,null]]},{"index":1,"process":1,"type":"ok","value":[["append",253,1],["r",253,[1]]]}]`))
	f.Add([]byte(`{"type":"info","process":"nemesis"}`))
	if b, err := os.ReadFile("../../testdata/external/elle/paper-example.json"); err == nil {
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
		}
	})
}

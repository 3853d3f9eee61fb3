package edn

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// render prints every transaction with its session, sequence number and
// times, one per line, for exact comparisons.
func render(h *history.History) string {
	var b strings.Builder
	for i := range h.Txns {
		t := &h.Txns[i]
		s := "-"
		if t.Session >= 0 {
			s = h.Sessions.String(t.Session)
		}
		fmt.Fprintf(&b, "%s s=%s/%d", h.TxnString(int32(i)), s, t.Seq)
		if t.HasTime {
			if t.Complete == Never {
				fmt.Fprintf(&b, " t=%d..never", t.Invoke)
			} else {
				fmt.Fprintf(&b, " t=%d..%d", t.Invoke, t.Complete)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func decodeString(t *testing.T, src string) (*history.History, error) {
	t.Helper()
	return Decode(strings.NewReader(src), history.DecodeOptions{Name: "test.edn"})
}

func TestSharedTestdata(t *testing.T) {
	dir := "../../testdata/external/elle"
	cases := []struct {
		file     string
		want     string
		sessions bool
		time     bool
		workload string
	}{
		{"paper-example.edn", `T0 (1) [append 253 1, append 253 3, append 253 4, append 255 2, append 255 3, append 255 4, append 255 5, append 256 1, append 256 2] s=1/0 t=1..2
T1 (3) [append 255 8, r 253 [1 3 4]] s=1/1 t=3..4
T2 (5) [append 256 4, r 255 [2 3 4 5 8], r 256 [1 2 4], r 253 [1 3 4]] s=1/2 t=5..6
T3 (7) [append 250 10, r 253 [1 3 4], r 255 [2 3 4 5], append 256 3] s=1/3 t=7..8
`, true, true, "list-append"},
		{"rw-register.edn", `T0 (2) [w x 2] s=0/0 t=1..2
T1 (4) [r x 3] s=0/1 t=3..4
T2 (6) [r x 2] s=0/2 t=5..6
`, true, true, "rw-register"},
		{"si-without-g-single.edn", `T0 (11) [append 9 2] s=2/0 t=0..0
T1 (21) [append 8 1, r 9 []] s=4/0 t=0..0
T2 (31) [r 6 [], r 8 [], append 9 5] s=7/0 t=0..0
T3 (41) [append 6 2, r 9 [2]] s=9/0 t=0..0
`, true, true, "list-append"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Fatal("testdata/external missing: it is part of the repository")
			}
			h, err := history.DecodeFile(path, "", history.DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h.Header.Format != "edn" {
				t.Errorf("sniffed format %q, want edn", h.Header.Format)
			}
			if got := render(h); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if h.Evidence.Sessions != c.sessions || h.Evidence.ClientTime != c.time {
				t.Errorf("evidence %+v, want sessions=%v client_time=%v", h.Evidence, c.sessions, c.time)
			}
			if h.Header.Workload != c.workload {
				t.Errorf("workload %q, want %q", h.Header.Workload, c.workload)
			}
			if len(h.Ignored) != 0 {
				t.Errorf("ignored %v", h.Ignored)
			}
		})
	}
}

func TestPairing(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		want    string
		ignored map[string]int
		err     string // substring of the InputError; "" = success
	}{
		{name: "info with nil value takes the invocation's value, unknown list read",
			src: `{:type :invoke, :process 0, :value [[:append 1 1] [:r 2 nil]], :time 5}
{:type :info, :process 0, :value nil, :time 9}`,
			want: "T0 [append 1 1, r 2 nil] unknown s=0/0 t=5..9\n"},
		{name: "info with its own value keeps it",
			src: `{:type :invoke, :process 0, :value [[:append 1 1] [:r 2 nil]]}
{:type :info, :process 0, :value [[:append 1 1] [:r 2 [7]]]}`,
			want: "T0 [append 1 1, r 2 [7]] unknown s=0/0 t=1..2\n"},
		{name: "fail without value",
			src: `{:type :invoke, :process 3, :f :txn, :value [[:w :x 1]]}
{:type :fail, :process 3, :f :txn}`,
			want: "T0 [w x 1] aborted s=3/0 t=1..2\n"},
		{name: "missing completion is unknown and never completes",
			src: `{:type :invoke, :process 0, :value [[:append 1 1]], :time 1, :index 0}
{:type :invoke, :process 1, :value [[:r 1 nil]], :time 2, :index 1}
{:type :ok, :process 1, :value [[:r 1 [1]]], :time 3, :index 2}`,
			want: "T0 (2) [r 1 [1]] s=1/0 t=2..3\nT1 (0) [append 1 1] unknown s=0/0 t=1..never\n"},
		{name: "interleaved processes complete in completion order",
			src: `{:type :invoke, :process 0, :value [[:w 1 1]], :time 1}
{:type :invoke, :process 1, :value [[:w 1 2]], :time 2}
{:type :ok, :process 1, :value [[:w 1 2]], :time 3}
{:type :invoke, :process 1, :value [[:r 1 nil]], :time 4}
{:type :ok, :process 0, :value [[:w 1 1]], :time 5}
{:type :ok, :process 1, :value [[:r 1 1]], :time 6}`,
			want: "T0 [w 1 2] s=1/0 t=2..3\nT1 [w 1 1] s=0/0 t=1..5\nT2 [r 1 1] s=1/1 t=4..6\n"},
		{name: "nemesis ops are counted, not transactions",
			src: `{:type :info, :process :nemesis, :f :start, :value nil}
{:type :invoke, :process 0, :value [[:w 1 1]]}
{:type :info, :process :nemesis, :f :start, :value [:isolated {"n1" #{"n2"}}]}
{:type :ok, :process 0, :value [[:w 1 1]]}`,
			want: "T0 [w 1 1] s=0/0 t=1..2\n", ignored: map[string]int{"nemesis op": 2}},
		{name: "duplicate invocation on one process",
			src: `{:type :invoke, :process 0, :value [[:w 1 1]]}
{:type :invoke, :process 0, :value [[:w 1 2]]}`,
			err: "test.edn:2: process: process 0 invokes again while its invocation on line 1 is still pending"},
		{name: "completion with nothing pending in a history with invocations",
			src: `{:type :invoke, :process 0, :value [[:w 1 1]]}
{:type :ok, :process 0, :value [[:w 1 1]]}
{:type :ok, :process 1, :value [[:w 1 2]]}`,
			err: "test.edn:3: process: completion by process 1 with no pending invocation"},
		{name: "completion-only history with processes",
			src: `{:type :ok, :process 4, :value [[:append :x 1]]}
{:type :fail, :process 4, :value [[:append :x 2]]}`,
			want: "T0 [append x 1] s=4/0\nT1 [append x 2] aborted s=4/1\n"},
		{name: "ops without process are completion-only transactions",
			src: `{:type :invoke, :value [[:append 1 1] [:r 2 nil]]}
{:type :ok, :value [[:append 1 1] [:r 2 nil]]}
{:type :info, :value [[:r 1 nil]]}`,
			want:    "T0 [append 1 1, r 2 []] s=-/0\nT1 [r 1 nil] unknown s=-/0\n",
			ignored: map[string]int{"invocation without :process (completion-only history)": 1}},
		{name: "non-txn client ops without micro-ops are counted",
			src: `{:type :invoke, :process 0, :f :read, :value nil}
{:type :ok, :process 0, :f :read, :value 5}
{:type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}
{:type :ok, :process 0, :f :txn, :value [[:r 1 nil]]}`,
			want:    "T0 [r 1 nil] s=0/0 t=3..4\n",
			ignored: map[string]int{"client op :f read without micro-ops": 2}},
		{name: "other :f with micro-ops is analysed like Elle does",
			src: `{:type :invoke, :process 0, :f :rw, :value [[:w 1 1]]}
{:type :ok, :process 0, :f :rw, :value [[:w 1 1]]}`,
			want: "T0 [w 1 1] s=0/0 t=1..2\n"},
		{name: "whole file as one vector of records",
			src: `[#jepsen.history.Op{:index 0, :time 1, :type :invoke, :process 0, :f :txn, :value [[:w :k "v"]]}
 #jepsen.history.Op{:index 1, :time 2, :type :ok, :process 0, :f :txn, :value [[:w :k "v"]]}]`,
			want: "T0 (1) [w k v] s=0/0 t=1..2\n"},
		{name: "register read nil in an aborted txn stays unknown",
			src:  `{:type :fail, :process 0, :value [[:r 1 nil] [:w 1 2]]}`,
			want: "T0 [r 1 nil, w 1 2] aborted s=0/0\n"},
		{name: "unsupported micro-op names line, op and key",
			src: `{:type :ok, :process 0, :value [[:cas :x [1 2]]]}`,
			err: "test.edn:1: value[0]: unsupported micro-op :cas on key :x"},
		{name: "scalar read in a list-append history",
			src: `{:type :ok, :process 0, :value [[:append 1 1] [:r 1 5]]}`,
			err: "test.edn:1: value[1]: read of key 1 returned the scalar 5 in a list-append history"},
		{name: "missing type", src: `{:process 0, :value []}`, err: "test.edn:1: type: missing"},
		{name: "bad type", src: "\n{:type :done}", err: "test.edn:2: type: unknown op type :done"},
		{name: "ok without value", src: `{:type :invoke, :process 0, :value [[:w 1 1]]}
{:type :ok, :process 0}`, err: "test.edn:2: value: :ok completion has no :value"},
		{name: "bad value", src: `{:type :ok, :process 0, :value 7}`, err: "test.edn:1: value: want a vector of micro-ops"},
		{name: "write without value", src: `{:type :ok, :process 0, :value [[:w 1]]}`, err: "test.edn:1: value[0]: [w 1] needs a value"},
		{name: "float key", src: `{:type :ok, :process 0, :value [[:w 1.5 1]]}`, err: "test.edn:1: value[0]: key 1.5"},
		{name: "time goes backwards", src: `{:type :invoke, :process 0, :time 9, :value [[:w 1 1]]}
{:type :ok, :process 0, :time 3, :value [[:w 1 1]]}`, err: "test.edn:2: time: completion time 3 is before"},
		{name: "syntax error position", src: "{:type :ok, :value []}\n{:type :ok, :value [[:w 1 1]]]", err: "test.edn:2: column 30: unexpected ']'"},
		{name: "not a map", src: `[1 2]`, err: "test.edn:1: want an op map, got integer 1"},
		{name: "unclosed top-level vector", src: "[{:type :ok, :process 0, :value []}\n", err: "never closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := decodeString(t, c.src)
			if c.err != "" {
				if err == nil || !history.IsInputError(err) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got error %v, want an InputError containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := render(h); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			want := c.ignored
			if want == nil {
				want = map[string]int{}
			}
			if fmt.Sprint(h.Ignored) != fmt.Sprint(want) {
				t.Errorf("ignored %v, want %v", h.Ignored, want)
			}
		})
	}
}

func TestListReadNormalisation(t *testing.T) {
	// A committed nil list read is [] (Elle); an unknown one stays unknown.
	h, err := decodeString(t, `{:type :invoke, :process 0, :value [[:r 1 nil]]}
{:type :ok, :process 0, :value [[:r 1 nil]]}
{:type :invoke, :process 0, :value [[:append 1 1] [:r 1 nil]]}`)
	if err != nil {
		t.Fatal(err)
	}
	o := h.Txns[0].Ops[0]
	if !o.IsList || o.ListUnknown || o.ListLen() != 0 {
		t.Errorf("committed nil read = %+v, want empty list", o)
	}
	o = h.Txns[1].Ops[1]
	if !o.IsList || !o.ListUnknown {
		t.Errorf("unknown nil read = %+v, want ListUnknown", o)
	}
	// The workload hint forces list reads even without appends.
	h, err = Decode(strings.NewReader(`{:type :ok, :process 0, :value [[:r 1 nil]]}`), history.DecodeOptions{Workload: "list-append"})
	if err != nil {
		t.Fatal(err)
	}
	if o := h.Txns[0].Ops[0]; !o.IsList {
		t.Errorf("with list-append hint: %+v", o)
	}
}

func TestSniff(t *testing.T) {
	yes := []string{
		"{:index 0 :type :invoke :value []}",
		"; comment\n{:type :ok, :process 0, :value []}",
		"[{:type :ok :value [[:r 1 nil]]}]",
		"#jepsen.history.Op{:index 0}",
	}
	no := []string{`{"type":"ok","value":[]}`, "w(1,2,3,4)", `[{"sid":1}]`, ""}
	for _, s := range yes {
		if Sniff([]byte(s)) < 50 {
			t.Errorf("Sniff(%q) = %d, want >= 50", s, Sniff([]byte(s)))
		}
	}
	for _, s := range no {
		if Sniff([]byte(s)) != 0 {
			t.Errorf("Sniff(%q) = %d, want 0", s, Sniff([]byte(s)))
		}
	}
}

// genHistory builds a random list-append or register history with
// sessions, client times and all three outcomes.
func genHistory(n, keys int, list bool, seed int64) *history.History {
	rng := rand.New(rand.NewSource(seed))
	h := history.New()
	h.Evidence.Sessions, h.Evidence.ClientTime = true, true
	next := int64(1)
	lists := map[int64][]int32{}
	now := int64(0)
	last := map[int32]int64{}
	for i := 0; i < n; i++ {
		sess := h.Sessions.Int(int64(rng.Intn(8)))
		var ops []history.Op
		var tx history.Txn
		for j := 0; j < 1+rng.Intn(4); j++ {
			k := int64(rng.Intn(keys))
			kid := h.Keys.Int(k)
			if rng.Intn(2) == 0 {
				v := next
				next++
				kind := history.Write
				if list {
					kind = history.Append
					lists[k] = append(lists[k], h.Values.Int(v))
				}
				ops = append(ops, history.Op{Kind: kind, Key: kid, Value: h.Values.Int(v)})
			} else if list {
				o := history.Op{Kind: history.Read, Key: kid}
				tx.SetList(&o, lists[k])
				ops = append(ops, o)
			} else {
				v := history.NoValue
				if next > 1 {
					v = h.Values.Int(rng.Int63n(next-1) + 1)
				}
				ops = append(ops, history.Op{Kind: history.Read, Key: kid, Value: v})
			}
		}
		st := history.Status(rng.Intn(10) / 8 * (1 + rng.Intn(2)))
		if st != history.Committed {
			for j := range ops {
				if ops[j].Kind == history.Read {
					if list {
						ops[j].SetListSpan(0, 0)
						ops[j].ListUnknown = true
					} else {
						ops[j].Value = history.NoValue
					}
				}
			}
		}
		now += int64(rng.Intn(20))
		inv := max(now, last[sess]+1)
		end := inv + int64(rng.Intn(50))
		last[sess] = end
		h.Add(history.Txn{Session: sess, Status: st, HasTime: true, Invoke: inv, Complete: end, Ops: ops, Lists: tx.Lists})
	}
	// Give each session its sequence numbers in index order.
	seq := map[int32]int32{}
	for i := range h.Txns {
		t := &h.Txns[i]
		t.Seq = seq[t.Session]
		seq[t.Session]++
	}
	return h
}

// sessionSeqs renders the history per session, which Encode must preserve
// (completion order across sessions may legitimately change).
func sessionView(h *history.History) string {
	per := map[string][]string{}
	for i := range h.Txns {
		t := &h.Txns[i]
		s := h.TxnString(int32(i))
		s = s[strings.IndexByte(s, '['):]
		per[h.Sessions.String(t.Session)] = append(per[h.Sessions.String(t.Session)],
			fmt.Sprintf("%s %d..%d", s, t.Invoke, t.Complete))
	}
	var b strings.Builder
	for s := 0; s < 8; s++ {
		fmt.Fprintf(&b, "%d: %s\n", s, strings.Join(per[fmt.Sprint(s)], " | "))
	}
	return b.String()
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, list := range []bool{true, false} {
		h := genHistory(300, 10, list, 7)
		var buf bytes.Buffer
		if err := Encode(&buf, h); err != nil {
			t.Fatal(err)
		}
		h2, err := Decode(bytes.NewReader(buf.Bytes()), history.DecodeOptions{Name: "rt"})
		if err != nil {
			t.Fatalf("list=%v: %v\n%s", list, err, buf.String()[:500])
		}
		if a, b := sessionView(h), sessionView(h2); a != b {
			t.Errorf("list=%v: round trip differs:\n%s\nvs\n%s", list, a, b)
		}
		if h2.Stats() != h.Stats() || !h2.Evidence.Sessions || !h2.Evidence.ClientTime {
			t.Errorf("stats %+v vs %+v, evidence %+v", h2.Stats(), h.Stats(), h2.Evidence)
		}
	}
}

func TestEncodeNeverCompleted(t *testing.T) {
	h := history.New()
	k := h.Keys.Int(1)
	h.Add(history.Txn{Session: h.Sessions.Int(3), Status: history.Unknown, HasTime: true, Invoke: 5, Complete: Never,
		Ops: []history.Op{{Kind: history.Append, Key: k, Value: h.Values.Int(9)}}})
	rd := history.Txn{Session: -1, Status: history.Committed, Ops: []history.Op{{Kind: history.Read, Key: k}}}
	rd.SetList(&rd.Ops[0], nil)
	h.Add(rd)
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		t.Fatal(err)
	}
	want := "{:index 0, :type :invoke, :process 3, :f :txn, :value [[:append 1 9]]}\n{:index 1, :type :ok, :f :txn, :value [[:r 1 []]]}\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func FuzzDecodeEDN(f *testing.F) {
	for _, s := range []string{
		"{:type :invoke, :process 0, :value [[:append 1 1] [:r 2 nil]], :time 5}\n{:type :info, :process 0, :time 9}",
		"[{:type :ok :value [[:r :x [1 2]] [:w :y 3]]}]",
		"{:type :fail, :process :nemesis}",
		"#jepsen.history.Op{:index 0, :type :ok, :process 0, :f :txn, :value [[:append 1 2]]}",
	} {
		f.Add([]byte(s))
	}
	for _, p := range []string{"paper-example.edn", "si-without-g-single.edn", "rw-register.edn"} {
		if b, err := os.ReadFile(filepath.Join("../../testdata/external/elle", p)); err == nil {
			f.Add(b)
		}
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

func BenchmarkDecode(b *testing.B) {
	h := genHistory(100000, 10000, true, 1)
	var buf bytes.Buffer
	if err := Encode(&buf, h); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(bytes.NewReader(data), history.DecodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

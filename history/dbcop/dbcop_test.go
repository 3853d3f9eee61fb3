package dbcop

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

const shared = "../../testdata/external" // copies of public histories (its README)

// encodeBincode writes h in dbcop's bincode layout (for tests).
func encodeBincode(h *Hist) []byte {
	var b bytes.Buffer
	u := func(v uint64) { binary.Write(&b, binary.LittleEndian, v) }
	bo := func(v bool) {
		if v {
			b.WriteByte(1)
		} else {
			b.WriteByte(0)
		}
	}
	s := func(v string) { u(uint64(len(v))); b.WriteString(v) }
	u(h.Params.ID)
	u(h.Params.NNode)
	u(h.Params.NVariable)
	u(h.Params.NTransaction)
	u(h.Params.NEvent)
	s(h.Info)
	s(h.Start)
	s(h.End)
	u(uint64(len(h.Data)))
	for _, sess := range h.Data {
		u(uint64(len(sess)))
		for _, t := range sess {
			u(uint64(len(t.Events)))
			for _, e := range t.Events {
				bo(e.Write)
				u(e.Variable)
				u(e.Value)
				bo(e.Success)
			}
			bo(t.Success)
		}
	}
	return b.Bytes()
}

func sample() *Hist {
	ev := func(w bool, k, v uint64, ok bool) Event { return Event{Write: w, Variable: k, Value: v, Success: ok} }
	return &Hist{
		Params: Params{ID: 3, NNode: 2, NVariable: 2, NTransaction: 2, NEvent: 2},
		Info:   "testdb", Start: "2022-07-05T12:23:43.032406225+08:00", End: "2022-07-05T12:23:55.667304706+08:00",
		Data: [][]Txn{
			{{Events: []Event{ev(true, 1, 1, true), ev(false, 2, 0, true)}, Success: true},
				{Events: []Event{ev(true, 2, 1, true), ev(true, 2, 9, false)}, Success: false}},
			{{Events: []Event{ev(false, 1, 1, true), ev(false, 2, 1, true)}, Success: true}},
		},
	}
}

func render(h *history.History) string {
	var b strings.Builder
	for i := range h.Txns {
		b.WriteString(h.TxnString(int32(i)))
		b.WriteString(" s=" + h.Sessions.String(h.Txns[i].Session) + "\n")
	}
	return b.String()
}

// TestBothEncodings: bincode and JSON of one history decode alike, with
// dbcop's rules (aborted transaction, dropped unexecuted event, 0 initial).
func TestBothEncodings(t *testing.T) {
	want := "T0 (1:0) [w 1 1, r 2 nil] s=1\nT1 (1:1) [w 2 1] aborted s=1\nT2 (2:0) [r 1 1, r 2 1] s=2\n"
	js, _ := json.Marshal(sample())
	for name, data := range map[string][]byte{"bincode": encodeBincode(sample()), "json": js} {
		t.Run(name, func(t *testing.T) {
			if history.Sniff(data) != "dbcop" {
				t.Errorf("sniffed as %q", history.Sniff(data))
			}
			h, err := Decode(bytes.NewReader(data), history.DecodeOptions{Name: "h"})
			if err != nil {
				t.Fatal(err)
			}
			if got := render(h); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			if h.Ignored["dbcop event not executed (success=false)"] != 1 || h.Header.DB != "testdb" {
				t.Errorf("ignored %v db %q", h.Ignored, h.Header.DB)
			}
		})
	}
}

func TestDgraph(t *testing.T) {
	path := filepath.Join(shared, "dbcop", "dgraph", "history.bincode")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s missing: it is part of the repository", path)
	}
	h, err := history.DecodeFile(path, "auto", history.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Established independently by walking the bincode with a separate
	// script: 10 sessions, 800 transactions (480 committed, 320 aborted),
	// 16000 events all executed, 8038 reads of which 1677 read 0 (nobody
	// writes 0), 7962 writes.
	st := h.Stats()
	reads, nils := 0, 0
	for _, tx := range h.Txns {
		for _, o := range tx.Ops {
			if o.Kind == history.Read {
				reads++
				if o.Value == history.NoValue {
					nils++
				}
			}
		}
	}
	if st.Sessions != 10 || st.Txns != 800 || st.Committed != 480 || st.Aborted != 320 || st.Ops != 16000 || reads != 8038 || nils != 1677 {
		t.Errorf("got %+v reads=%d nil=%d", st, reads, nils)
	}
	if h.Header.DB != "Dgraph" || h.Header.Extra["n_node"] != "10" {
		t.Errorf("header %+v", h.Header)
	}
}

func TestOtherFormatsNotSniffed(t *testing.T) {
	for _, f := range []string{"chronos/format-kv.json", "elle/rw-register.json", "polysi/galera.txt", "postgres-ssi-g2/history.jsonl"} {
		b, err := os.ReadFile(filepath.Join(shared, f))
		if err != nil {
			continue
		}
		if len(b) > 64<<10 {
			b = b[:64<<10]
		}
		if s := Sniff(b); s != 0 {
			t.Errorf("%s sniffs as dbcop (%d)", f, s)
		}
	}
}

func TestBadInput(t *testing.T) {
	good := encodeBincode(sample())
	flip := append([]byte(nil), good...)
	// the first event's write bool sits after the header, strings and the
	// three lengths (sessions, txns, events)
	hdr := 40 + 8 + len("testdb") + 8 + 35 + 8 + 35
	flip[hdr+24] = 7
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"truncated", good[:len(good)-1], []string{"h.bin", "data[1][0].success", "byte offset", "truncated"}},
		{"bad-bool", flip, []string{"data[0][0].events[0].write", "byte offset " + itoa(hdr+24), "want 0 or 1"}},
		{"trailing", append(append([]byte(nil), good...), 1, 2), []string{"unexpected byte"}},
		{"huge-count", append(append([]byte(nil), good[:hdr]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f), []string{"data.len", "cannot fit"}},
		{"json-type", []byte(`{"params":{"id":"x"}}`), []string{"params.id", "byte offset"}},
		{"json-syntax", []byte("{\"params\":\n{,}}"), []string{"h.bin:2", "syntax"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(bytes.NewReader(c.data), history.DecodeOptions{Name: "h.bin"})
			if err == nil || !history.IsInputError(err) {
				t.Fatalf("err = %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// FuzzDecode: never panics, errors are InputErrors, output well formed.
func FuzzDecode(f *testing.F) {
	f.Add(encodeBincode(sample()))
	js, _ := json.Marshal(sample())
	f.Add(js)
	f.Add([]byte(`{"params":{"n_node":1},"data":[[{"events":[{"write":false,"variable":1,"value":0,"success":true}],"success":true}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		Sniff(data)
		h, err := Decode(bytes.NewReader(data), history.DecodeOptions{Name: "f"})
		if err != nil {
			if !history.IsInputError(err) {
				t.Fatalf("not an InputError: %v", err)
			}
			return
		}
		for i, tx := range h.Txns {
			if tx.Index != int32(i) {
				t.Fatal("index")
			}
			for _, o := range tx.Ops {
				if o.Key < 0 || int(o.Key) >= h.Keys.Len() || int(o.Value) >= h.Values.Len() {
					t.Fatalf("bad op %+v", o)
				}
			}
		}
	})
}

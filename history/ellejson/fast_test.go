package ellejson

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/txray/txray/history"
	hedn "github.com/txray/txray/history/edn"
	"github.com/txray/txray/internal/proptest"
)

// decodeBoth decodes in with the fast path and with the general reader
// only, and fails unless both give the same history (every id, order and
// flag) or the same error message.
func decodeBoth(t testing.TB, in []byte) {
	t.Helper()
	opts := history.DecodeOptions{Name: "h.json", SizeHint: int64(len(in))}
	fastOff = true
	want, wantErr := Decode(bytes.NewReader(in), opts)
	fastOff = false
	got, gotErr := Decode(bytes.NewReader(in), opts)
	proptest.SameDecode(t, "fast", in, want, got, wantErr, gotErr)
}

// fastTaken are inputs in the shapes elle-cli writes: the fast path must
// take them whole (not decline), and give the general reader's result.
var fastTaken = []string{
	`[{"type":"invoke","f":"txn","value":[["append",1,2],["r",3,null]],"process":0,"time":123,"index":4},
{"type":"ok","f":"txn","value":[["append",1,2],["r",3,[1,2]]],"process":0,"time":124,"index":5}]`,
	"[\n  {\"index\" : 0, \"process\" : 1, \"type\" : \"invoke\", \"value\" : [ [\"r\", \"x\", null], [\"w\", \"y\", \"a\"] ] } ,\n" +
		"  {\"index\" : 1, \"process\" : 1, \"type\" : \"ok\", \"value\" : [ [\"read\", \"x\", 5], [\"write\", \"y\", \"a\"] ] }\n]\n",
	`{"type":"invoke","process":0,"value":[["append",1,1]],"time":5}
{"type":"info","process":0,"time":9}
{"type":"invoke","process":1,"value":[["append",1,2]],"time":6}
{"type":"fail","process":1,"value":null,"time":10,"error":["duplicate-key",{"a":[1,true,false,null,"x"]}]}
{"type":"info","process":"nemesis","f":"start","value":null}
{"type":"invoke","process":2,"f":"start","value":[]}
{"type":"ok","process":2,"f":"start","value":[]}
{"type":"ok","value":[["r",-1,[]],["r",0]]}`,
	`[{"type":"ok","process":null,"f":null,"time":null,"index":null,"value":[]}]`,
}

// fastDeclined are inputs the fast path must hand to the general reader
// (and both must agree on, results or errors).
var fastDeclined = []string{
	`[{"type":"ok","process":0,"value":[["append",1,2.5]]}]`,
	`[{"type":"ok","process":0,"value":[["append",1,"a\"b"]]}]`,
	`[{"type":"ok","process":0,"value":[["append",1,"é"]]}]`,
	`[{"type":"ok","process":0,"value":[["append",1,12345678901234567890]]}]`,
	`[{"type":"ok","process":0,"value":[["append",1,-0]]}]`,
	`[{"type":"ok","process":0,"value":[["append",1,007]]}]`,
	`[{"type":"ok","process":0,"type":"ok","value":[]}]`,
	`[{"type":"ok","process":0,"value":[["cas",1,[1,2]]]}]`,
	`[{"type":"ok","process":0,"value":[["w",1,null]]}]`,
	`[{"type":"ok","process":0,"value":[["append",1,[1]]]}]`,
	`[{"type":"okay","process":0,"value":[]}]`,
	`[{"type":"ok","process":0,"value":[]}] x`,
	`[{"type":"ok","process":0,"value":[]}`,
	`[{"type":"ok","process":0,"value":[]}]]`,
	`[{"type":"ok","process":0,"value":[]}{"type":"ok","value":[]}]`,
	`{"type":"ok","process":0,"value":[]}]`,
	`{"type" "ok","process":0,"value":[]}`,
	`{"process":0,"value":[]}`,
	`{"type":"ok","process":0,"value":[],"time":1.5}`,
	`{"type":"ok","process":0,"value":[],"time":"1"}`,
	`{"type":"ok","process":0,"f":5,"value":[]}`,
	`{"type":"ok","process":true,"value":[]}`,
	`{"type":"ok","process":0,"value":[["r",1,5]],"x":{"a" 1}}`,
	"\xEF\xBB\xBF" + `[{"type":"ok","process":0,"value":[]}]`,
	`{"type":"invoke","process":0,"value":[]}` + "\n" + `{"type":"invoke","process":0,"value":[]}`,
	`{"type":"invoke","process":0,"value":[],"time":9}` + "\n" + `{"type":"ok","process":0,"value":[],"time":3}`,
	`{"type":"ok","process":0,"value":[["append",1,1]]}`,
	`[]`,
	``,
}

func TestFastPathTakesElleCLIShapes(t *testing.T) {
	for i, c := range fastTaken {
		if !hedn.FeedJSON([]byte(c), hedn.NewBuilder("h.json", "")) {
			t.Errorf("case %d: fast path declined %q", i, c)
		}
		decodeBoth(t, []byte(c))
	}
	for i, c := range fastDeclined {
		// Declining is allowed to happen in FeedJSON or in the builder;
		// either way, the results must match.
		_ = i
		decodeBoth(t, []byte(c))
	}
}

func TestFastPathMatchesGeneralReader(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/external/elle/*.json")
	if len(files) == 0 {
		t.Fatal("no elle-cli JSON files in testdata/external/elle")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decodeBoth(t, b)
		if !hedn.FeedJSON(b, hedn.NewBuilder("h.json", "")) {
			t.Errorf("%s: fast path declined an elle-cli file", f)
		}
	}
	r := rand.New(rand.NewSource(17))
	taken := 0
	for i := 0; i < 300; i++ {
		h := genElleJSON(r, 1+r.Intn(60), i%2 == 0)
		decodeBoth(t, h)
		if hedn.FeedJSON(h, hedn.NewBuilder("h.json", "")) {
			taken++
		}
		// mutate: truncate, or flip a byte
		m := append([]byte(nil), h...)
		switch i % 3 {
		case 0:
			m = m[:r.Intn(len(m))]
		case 1:
			m[r.Intn(len(m))] = "{}[],:\" 0-9an\nx"[r.Intn(15)]
		}
		decodeBoth(t, m)
	}
	// The generated histories have elle-cli's shapes: the fast path must
	// take every one, or this test compares the general reader with itself.
	if taken != 300 {
		t.Errorf("fast path took %d of 300 generated histories", taken)
	}
}

// genElleJSON writes a random elle-cli JSON history: n invocations and
// their completions in random interleavings, fields in random order, with
// nemesis ops, failures, indeterminate ops and never-completed ones.
func genElleJSON(r *rand.Rand, n int, array bool) []byte {
	var sb strings.Builder
	ws := func() string { return []string{"", " ", "\n", " \t"}[r.Intn(4)] }
	var objs []string
	pending := map[int][]string{}
	idx, tm := 0, 0
	scal := func() string {
		if r.Intn(5) == 0 {
			return fmt.Sprintf("%q", string(rune('a'+r.Intn(3))))
		}
		return fmt.Sprint(r.Intn(9) - 1)
	}
	obj := func(typ string, proc string, val string) string {
		fields := []string{`"type":` + ws() + `"` + typ + `"`, `"process":` + proc, `"index":` + fmt.Sprint(idx)}
		if r.Intn(6) > 0 {
			fields = append(fields, `"f":"txn"`)
		}
		if val != "" {
			fields = append(fields, `"value":`+val)
		}
		if r.Intn(8) > 0 {
			fields = append(fields, `"time":`+fmt.Sprint(tm))
		}
		if typ == "fail" && r.Intn(2) == 0 {
			fields = append(fields, `"error":["conflict",{"x":[1,"y",null]}]`)
		}
		idx++
		tm += r.Intn(3)
		r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
		return "{" + ws() + strings.Join(fields, ","+ws()) + ws() + "}"
	}
	for i := 0; i < n; i++ {
		p := r.Intn(4)
		if r.Intn(10) == 0 {
			objs = append(objs, obj("info", `"nemesis"`, "null"))
		}
		if ops, ok := pending[p]; ok {
			typ := []string{"ok", "ok", "ok", "fail", "info"}[r.Intn(5)]
			val := "[" + strings.Join(ops, ",") + "]"
			if typ != "ok" && r.Intn(2) == 0 {
				val = []string{"", "null"}[r.Intn(2)]
			}
			objs = append(objs, obj(typ, fmt.Sprint(p), val))
			delete(pending, p)
			continue
		}
		var ops []string
		for k := r.Intn(4); k >= 0; k-- {
			key := scal()
			switch r.Intn(3) {
			case 0:
				ops = append(ops, `["append",`+key+`,`+fmt.Sprint(idx)+`]`)
			case 1:
				ops = append(ops, `["w",`+key+`,`+scal()+`]`)
			default:
				ops = append(ops, `["r",`+key+`,null]`)
			}
		}
		pending[p] = ops
		objs = append(objs, obj("invoke", fmt.Sprint(p), "["+strings.Join(ops, ",")+"]"))
		// completed reads: fill some read values
		for j, o := range ops {
			if strings.HasPrefix(o, `["r"`) {
				var v string
				switch r.Intn(3) {
				case 0:
					v = "[" + fmt.Sprint(r.Intn(5)) + "," + fmt.Sprint(r.Intn(5)) + "]"
				case 1:
					v = scal()
				default:
					v = "null"
				}
				ops[j] = strings.TrimSuffix(o, "null]") + v + "]"
			}
		}
		pending[p] = ops
	}
	if array {
		sb.WriteString("[" + ws())
		sb.WriteString(strings.Join(objs, ","+ws()))
		sb.WriteString(ws() + "]\n")
	} else {
		sb.WriteString(strings.Join(objs, "\n"))
		sb.WriteString(ws())
	}
	return []byte(sb.String())
}

func FuzzFastPathMatchesGeneralReader(f *testing.F) {
	for _, c := range fastTaken {
		f.Add([]byte(c))
	}
	for _, c := range fastDeclined {
		f.Add([]byte(c))
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 8; i++ {
		f.Add(genElleJSON(r, 1+r.Intn(8), i%2 == 0))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeBoth(t, b)
	})
}

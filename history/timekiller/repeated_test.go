package timekiller

import (
	"reflect"
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// TestEmptyOpsNil: an empty ops array decodes to nil Ops whatever the
// decoder's op arena holds: sequentially after other transactions' ops,
// and in a parallel worker whether or not it decoded a chunk with ops
// before (which worker takes a chunk is up to the scheduler; a fresh worker
// used to give nil and a used one an empty slice of its arena, so the
// parallel decode differed from the sequential one some of the time:
// testdata/fuzz/FuzzParallel/35926d88afed3153).
func TestEmptyOpsNil(t *testing.T) {
	in := "[\n{\"tid\":1,\"ops\":[{\"t\":\"w\",\"k\":1,\"v\":2}]},\n{\"tid\":2,\"ops\":[]},\n{\"tid\":3,\"ops\":[ ]}\n]"
	h, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "f"})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2} {
		if h.Txns[i].Ops != nil {
			t.Errorf("sequential: txn %d has Ops %#v, want nil", i, h.Txns[i].Ops)
		}
	}
	with := &pchunk{buf: []byte("{\"tid\":1,\"ops\":[{\"t\":\"w\",\"k\":1,\"v\":2}]},\n"), first: 1}
	empty := func() *pchunk { return &pchunk{buf: []byte("{\"tid\":2,\"ops\":[]}\n]"), first: 2} }
	fresh, used := newPWorker("f"), newPWorker("f")
	used.parse(with)
	a, b := empty(), empty()
	fresh.parse(a)
	used.parse(b)
	if !with.ok || !a.ok || !b.ok {
		t.Fatalf("chunks not decoded: %v %v %v", with.ok, a.ok, b.ok)
	}
	if !reflect.DeepEqual(a.txns, b.txns) || a.txns[0].Ops != nil {
		t.Errorf("fresh worker %#v, used worker %#v: want both nil Ops", a.txns, b.txns)
	}
}

// TestRepeatedFields: a repeated known field is an error naming its line
// and field, sequentially, in parallel chunks and through the general op
// path; a repeated unknown field is skipped like any unknown field.
func TestRepeatedFields(t *testing.T) {
	txn := func(s string) string {
		return "[\n{\"tid\":1,\"ops\":[{\"t\":\"r\",\"k\":1,\"v\":null}]},\n" + s + "\n]"
	}
	for _, tc := range []struct{ in, want string }{
		{txn(`{"tid":2,"tid":3,"ops":[]}`), `f:3: [1].tid: repeated field`},
		{txn(`{"sid":2,"sid":"a","ops":[]}`), `f:3: [1].sid: repeated field`},
		{txn(`{"sts":2,"cts":3,"sts":1,"ops":[]}`), `f:3: [1].sts: repeated field`},
		{txn(`{"cts":2,"ops":[],"cts":3}`), `f:3: [1].cts: repeated field`},
		{txn(`{"status":"aborted","status":"committed","ops":[]}`), `f:3: [1].status: repeated field`},
		{txn("{\"ops\":[{\"t\":\"w\",\"k\":1,\"v\":2}],\n\"ops\":[]}"), `f:4: [1].ops: repeated field`},
		{txn(`{"ops":[{"t":"w","k":1,"v":2,"k":5}]}`), `f:3: [1].ops[0].k: repeated field`},
		{txn(`{"ops":[{"t":"w","t":"r","k":1,"v":2}]}`), `f:3: [1].ops[0].t: repeated field`},
		{txn(`{"ops":[{"t":"r","k":1},{"t":"r","k":1,"v":[1],"v":2}]}`), `f:3: [1].ops[1].v: repeated field`},
		{txn(`{"ops":[],"sts":{"p":1,"l":2,"p":3}}`), `f:3: [1].sts: repeated "p"`},
		{txn(`{"ops":[],"cts":{"l":1,"p":2,"l":null}}`), `f:3: [1].cts: repeated "l"`},
	} {
		_, err := Decode(strings.NewReader(tc.in), history.DecodeOptions{Name: "f"})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q...", tc.in, err, tc.want)
		}
		sameDecode(t, []byte(tc.in), 7, 0)
		sameFastGeneral(t, []byte(tc.in))
	}
	in := txn(`{"x":1,"x":"y","ops":[{"t":"w","k":1,"v":2,"z":1,"z":2}]}`)
	h, err := Decode(strings.NewReader(in), history.DecodeOptions{Name: "f"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Ignored["unknown transaction field"] + h.Ignored["unknown op field"]; got != 4 {
		t.Errorf("ignored %v, want 2 unknown transaction fields and 2 unknown op fields", h.Ignored)
	}
}

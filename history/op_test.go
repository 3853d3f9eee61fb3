package history

import (
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// TestOpLayout: an Op is 20 bytes and holds no pointers, so op arrays are
// small and the garbage collector never scans them (docs/benchmarks.md,
// issue 17).
func TestOpLayout(t *testing.T) {
	if n := unsafe.Sizeof(Op{}); n != 20 {
		t.Errorf("Op is %d bytes, want 20", n)
	}
	if n := unsafe.Sizeof(Txn{}); n > 152 {
		t.Errorf("Txn is %d bytes, want at most 152 (rare side tables belong in TxnExt)", n)
	}
	ty := reflect.TypeOf(Op{})
	for i := range ty.NumField() {
		switch ty.Field(i).Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.String, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan:
			t.Errorf("Op field %s holds a pointer (%s)", ty.Field(i).Name, ty.Field(i).Type)
		}
	}
}

// TestTxnSideTables: list elements, predicates and op times live in the
// transaction and follow its ops through SetList, ExtendList, AppendOp and
// Clone.
func TestTxnSideTables(t *testing.T) {
	var tx Txn
	tx.Ops = make([]Op, 4)
	tx.Ops[0] = Op{Kind: Read, Key: 1}
	tx.SetList(&tx.Ops[0], []int32{5, 6})
	tx.Ops[1] = Op{Kind: PredRead, Key: NoValue, Value: NoValue}
	tx.SetPred(&tx.Ops[1], Predicate{Table: "t", Where: "k > 0", Result: []Row{{1, 2}}})
	tx.Ops[2] = Op{Kind: Read, Key: 2}
	tx.SetList(&tx.Ops[2], nil)
	tx.Ops[3] = Op{Kind: Write, Key: 3, Value: 9}
	tx.SetOpTime(3, 10, 20)
	// extending a list that other elements follow moves it to the end
	tx.ExtendList(&tx.Ops[0], 7)
	tx.ExtendList(&tx.Ops[2], 8, 9)
	if got := tx.ListOf(&tx.Ops[0]); !slices.Equal(got, []int32{5, 6, 7}) {
		t.Errorf("list 0 = %v", got)
	}
	if got := tx.ListOf(&tx.Ops[2]); !slices.Equal(got, []int32{8, 9}) || tx.Ops[2].ListLen() != 2 {
		t.Errorf("list 2 = %v", got)
	}
	if p := tx.PredOf(&tx.Ops[1]); p == nil || p.Where != "k > 0" {
		t.Errorf("pred = %+v", p)
	}
	if tx.PredOf(&tx.Ops[0]) != nil || tx.ListOf(&tx.Ops[1]) != nil || tx.ListOf(&tx.Ops[3]) != nil {
		t.Error("payload of the wrong kind of op")
	}
	if _, _, ok := tx.OpTime(0); ok {
		t.Error("op 0 has a time")
	}
	if inv, com, ok := tx.OpTime(3); !ok || inv != 10 || com != 20 {
		t.Errorf("op 3 time = %d %d %v", inv, com, ok)
	}
	// AppendOp copies the payloads into another transaction.
	var u Txn
	for j := len(tx.Ops) - 1; j >= 0; j-- {
		u.AppendOp(&tx, j)
	}
	if got := u.ListOf(&u.Ops[3]); !slices.Equal(got, []int32{5, 6, 7}) {
		t.Errorf("appended list = %v", got)
	}
	if p := u.PredOf(&u.Ops[2]); p == nil || p.Table != "t" {
		t.Errorf("appended pred = %+v", p)
	}
	if inv, _, ok := u.OpTime(0); !ok || inv != 10 {
		t.Errorf("appended time = %d %v", inv, ok)
	}
	if _, _, ok := u.OpTime(3); ok {
		t.Error("appended op 3 got a time")
	}
	// Clone shares nothing.
	c := tx.Clone()
	c.ListOf(&c.Ops[0])[0] = 99
	c.PredOf(&c.Ops[1]).Result[0].Value = 99
	if tx.ListOf(&tx.Ops[0])[0] != 5 || tx.PredOf(&tx.Ops[1]).Result[0].Value != 2 {
		t.Error("Clone shares memory")
	}
	// ClearList makes a register op again.
	tx.Ops[0].ClearList()
	if tx.Ops[0].IsList || tx.ListOf(&tx.Ops[0]) != nil {
		t.Errorf("cleared op %+v", tx.Ops[0])
	}
	h := New()
	for _, v := range []int64{5, 6, 7} {
		h.Values.Int(v)
	}
	h.Keys.Int(1)
	if s := h.OpString(&c, &c.Ops[1]); s != "rp t where k > 0" {
		t.Errorf("OpString = %q", s)
	}
}

// TestFinalWrite: a write or delete is its transaction's final one of a
// key unless a later write or delete of the same key follows (Adya's final
// version; reading an earlier one is G1b). Appends are not register writes
// (Kind.IsWrite) and do not count.
func TestFinalWrite(t *testing.T) {
	tx := Txn{Ops: []Op{
		{Kind: Write, Key: 1, Value: 1},  // 0: op 3 deletes key 1 later
		{Kind: Write, Key: 2, Value: 1},  // 1: only an append of key 2 follows
		{Kind: Append, Key: 2, Value: 2}, // 2
		{Kind: Delete, Key: 1, Value: 3}, // 3: final
		{Kind: Write, Key: 3, Value: 4},  // 4: final
	}}
	for j, want := range []bool{false, true, true, true, true} {
		if got := tx.FinalWrite(j); got != want {
			t.Errorf("op %d: FinalWrite = %v, want %v", j, got, want)
		}
	}
}

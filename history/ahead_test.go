package history

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
)

// TestReadAheadYieldsInputThenError: the read-ahead reader returns exactly
// the input's bytes and then the source's read error, not a clean end.
func TestReadAheadYieldsInputThenError(t *testing.T) {
	in := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	for _, block := range []int{1, 7, 4096, 1 << 20} {
		rd, stop := ReadAhead(bytes.NewReader(in), block)
		got, err := io.ReadAll(rd)
		stop()
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("block %d: %d bytes, err %v; want the %d input bytes", block, len(got), err, len(in))
		}
		boom := errors.New("boom")
		rd, stop = ReadAhead(io.MultiReader(bytes.NewReader(in), errReader{boom}), block)
		got, err = io.ReadAll(rd)
		stop()
		if !errors.Is(err, boom) || !bytes.Equal(got, in) {
			t.Fatalf("block %d: %d bytes, err %v; want the input, then boom", block, len(got), err)
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestOpArenasAreZeroed: arenas are fresh, zeroed and at least as long as
// asked.
func TestOpArenasAreZeroed(t *testing.T) {
	a := NewOpArenas(128)
	defer a.Stop()
	for _, min := range []int{1, 128, 500} {
		s := a.Next(min)
		if len(s) < min {
			t.Fatalf("Next(%d): %d ops", min, len(s))
		}
		for i := range s {
			if s[i] != (Op{}) {
				t.Fatalf("op %d not zero: %+v", i, s[i])
			}
		}
	}
}

// TestListArenasAreZeroed: the same for int32 arenas (list elements).
func TestListArenasAreZeroed(t *testing.T) {
	a := NewArenas[int32](5000)
	defer a.Stop()
	for _, min := range []int{1, 5000, 9000} {
		s := a.Next(min)
		if len(s) < min {
			t.Fatalf("Next(%d): %d elements", min, len(s))
		}
		for i, v := range s {
			if v != 0 {
				t.Fatalf("element %d = %d, not zero", i, v)
			}
		}
	}
}

// TestTxnPrefaulterKeepsTable: faulting in a table's spare capacity ahead
// of the appends changes nothing the appends wrote or will write (the
// spare part reads as zero transactions, the appended part as appended),
// whether the helper is ahead, behind or stopped early; Stop is safe
// twice and on a nil or inert prefaulter.
func TestTxnPrefaulterKeepsTable(t *testing.T) {
	for _, stopAt := range []int{0, 1000, 200000} {
		ts := make([]Txn, 10, 200000)
		for i := range ts {
			ts[i] = Txn{Index: int32(i), ID: "pre"}
		}
		p := PrefaultTxns(ts)
		for i := 10; i < cap(ts); i++ {
			if i == stopAt {
				p.Stop()
			}
			ts = append(ts, Txn{Index: int32(i), Seq: int32(i % 7), Invoke: int64(i), Complete: int64(i) + 1})
			if i&4095 == 0 {
				p.Advance(len(ts))
			}
		}
		p.Stop()
		p.Stop()
		for i := range ts {
			want := Txn{Index: int32(i), Seq: int32(i % 7), Invoke: int64(i), Complete: int64(i) + 1}
			if i < 10 {
				want = Txn{Index: int32(i), ID: "pre"}
			}
			if !reflect.DeepEqual(ts[i], want) {
				t.Fatalf("stop at %d: txn %d = %+v, want %+v", stopAt, i, ts[i], want)
			}
		}
	}
	var nilP *TxnPrefaulter
	nilP.Advance(1)
	nilP.Stop()
	full := make([]Txn, 4)
	q := PrefaultTxns(full) // no spare capacity: inert
	q.Advance(4)
	q.Stop()
}

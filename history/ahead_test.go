package history

import (
	"bytes"
	"errors"
	"io"
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

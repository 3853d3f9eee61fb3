package jsonl

import (
	"bytes"

	"github.com/txray/txray/history"
)

// LineDecoder decodes native transaction lines one at a time for online
// checkers (txray watch): keys, values and sessions are interned into one
// History whose interners stay stable for the decoder's lifetime, but
// transactions are not accumulated, so memory grows only with the number of
// distinct keys and values.
type LineDecoder struct {
	d    decoder
	line int
	n    int32
}

// NewLineDecoder returns a decoder; file names the input in errors.
func NewLineDecoder(file string) *LineDecoder {
	return &LineDecoder{d: decoder{h: history.New(), file: file, seqs: map[int32]int32{}}}
}

// ForgetSession forgets session id s (an online checker forgot it as
// idle): its automatic sequence numbering restarts, and when the history's
// session interner recycles ids (history.NewRecyclingInterner) the id is
// released, so a stream of ever new sessions keeps the decoder's state
// bounded by the sessions active at once. A session that comes back is
// interned afresh, possibly under another id.
func (ld *LineDecoder) ForgetSession(s int32) {
	delete(ld.d.seqs, s)
	ld.d.h.Sessions.Release(s, s+1)
}

// History is the history whose interners render the decoded ids (its Txns
// stay empty).
func (ld *LineDecoder) History() *history.History { return ld.d.h }

// Decode parses one line. It returns (nil, nil) for blank lines, headers and
// evidence records, and an *history.InputError for bad input. The returned
// transaction is freshly allocated and never reused by the decoder.
func (ld *LineDecoder) Decode(b []byte) (*history.Txn, error) {
	ld.line++
	if ld.line == 1 {
		b = bytes.TrimPrefix(b, bom)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, nil
	}
	if err := ld.d.line(b, ld.line); err != nil {
		return nil, err
	}
	h := ld.d.h
	if len(h.Txns) == 0 {
		return nil, nil
	}
	t := new(history.Txn)
	*t = h.Txns[len(h.Txns)-1]
	t.Index = ld.n
	ld.n++
	h.Txns = h.Txns[:0]
	return t, nil
}

package history

import "sync/atomic"

// OpShape summarises which kinds of ops a history holds: what checkers'
// applicability tests ask (every Checker.Applies looked at every op on its
// own: about 0.5 CPU-s per check.Pick on 15M ops).
type OpShape struct {
	kinds uint8 // bit k: some op has Kind k
	// ListReads: some Read is a list read (IsList).
	ListReads bool
	// ValueReads: some Read is a register read of a value (not IsList,
	// Value != NoValue).
	ValueReads bool
}

// Has reports whether some op has kind k.
func (s OpShape) Has(k Kind) bool { return k < 8 && s.kinds&(1<<k) != 0 }

// Only reports whether every op's kind is one of ks.
func (s OpShape) Only(ks ...Kind) bool {
	var m uint8
	for _, k := range ks {
		if k < 8 {
			m |= 1 << k
		}
	}
	return s.kinds&^m == 0
}

// shapeMemo is the memo of MemoShape: one history's shape.
type shapeMemo struct {
	h *History
	s OpShape
}

// memo is the current MemoShape (one at a time: a newer one replaces it).
var memo atomic.Pointer[shapeMemo]

func memoShape(h *History) (OpShape, bool) {
	if m := memo.Load(); m != nil && m.h == h {
		return m.s, true
	}
	return OpShape{}, false
}

// Shape returns the OpShape of h's ops: one pass over them, or the memo
// MemoShape holds for h.
func (h *History) Shape() OpShape {
	if s, ok := memoShape(h); ok {
		return s
	}
	var s OpShape
	for i := range h.Txns {
		for j := range h.Txns[i].Ops {
			o := &h.Txns[i].Ops[j]
			if o.Kind < 8 {
				s.kinds |= 1 << o.Kind
			}
			if o.Kind == Read {
				if o.IsList {
					s.ListReads = true
				} else if o.Value != NoValue {
					s.ValueReads = true
				}
			}
		}
	}
	return s
}

// MemoShape computes h's OpShape once and makes h.Shape and h.HasDeletes
// return it without a pass until release is called. The caller promises
// that h's ops do not change meanwhile (check.Pick holds it while every
// checker's Applies looks at h). The memo belongs to the *History pointer
// h (a copy of the History computes its own), and there is one memo at a
// time: a later MemoShape, of any history, replaces it (h then computes
// again), and release ends only its own.
func (h *History) MemoShape() (release func()) {
	m := &shapeMemo{h: h, s: h.Shape()}
	memo.Store(m)
	return func() { memo.CompareAndSwap(m, nil) }
}

package regread

import (
	"maps"
	"testing"

	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// reference is a direct, quadratic reading of the package comment's rules,
// written independently of Analyze's indexes, for differential fuzzing.
func reference(h *history.History, opts Options) (writer map[[2]int]int32, counts map[string]int, initTxn int32) {
	// Judged transactions: the committed ones, and unknown-outcome ones a
	// judged transaction read from (a fixpoint over the first pass's
	// writers); their non-nil reads are judged like committed ones.
	writer, counts, initTxn = referenceJudged(h, opts, nil)
	judged := map[int]bool{}
	for ti := range h.Txns {
		if h.Txns[ti].Status == history.Committed {
			judged[ti] = true
		}
	}
	grown := false
	for changed := true; changed; {
		changed = false
		for ref, w := range writer {
			if judged[ref[0]] && w >= 0 && int(w) != ref[0] && w != initTxn && h.Txns[w].Status == history.Unknown && !judged[int(w)] {
				judged[int(w)], changed, grown = true, true, true
			}
		}
	}
	if !grown {
		return writer, counts, initTxn
	}
	return referenceJudged(h, opts, judged)
}

func referenceJudged(h *history.History, opts Options, judged map[int]bool) (writer map[[2]int]int32, counts map[string]int, initTxn int32) {
	initial := func(v int32) bool {
		if v == history.NoValue {
			return true
		}
		if opts.InitialValue == "" || v < 0 || int(v) >= h.Values.Len() {
			return false
		}
		return h.Values.String(v) == opts.InitialValue
	}
	isW := func(o *history.Op) bool { return o.Kind == history.Write }
	isR := func(o *history.Op) bool { return o.Kind == history.Read && !o.IsList }
	valid := func(o *history.Op) bool {
		return o.Key >= 0 && int(o.Key) < h.Keys.Len() && o.Value >= history.NoValue && int(o.Value) < h.Values.Len()
	}
	// initial transaction
	initTxn = -1
	if len(h.Txns) >= 2 {
		t0 := &h.Txns[0]
		ok := t0.Status == history.Committed && len(t0.Ops) > 0 && (t0.Session < 0 || t0.Seq == 0)
		keys := map[int32]bool{}
		val := int32(history.NoValue)
		for j := range t0.Ops {
			o := &t0.Ops[j]
			if !isW(o) || !valid(o) || keys[o.Key] || o.Value == history.NoValue || (j > 0 && o.Value != val) {
				ok = false
				break
			}
			val = o.Value
			keys[o.Key] = true
		}
		if ok && !initial(val) && (opts.InitialValue != "" || h.Values.String(val) != "0") {
			ok = false
		}
		for ti := 1; ok && ti < len(h.Txns); ti++ {
			t := &h.Txns[ti]
			seen := map[int32]bool{} // keys written earlier in t
			for j := range t.Ops {
				o := &t.Ops[j]
				if !valid(o) || !(isW(o) || isR(o)) {
					continue
				}
				if !keys[o.Key] {
					ok = false
					break
				}
				if isW(o) && o.Value == val {
					ok = false
				}
				if isR(o) && t.Status == history.Committed && !seen[o.Key] && (o.Value == history.NoValue || (o.Value != val && initial(o.Value))) {
					ok = false
				}
				if isW(o) {
					seen[o.Key] = true
				}
			}
		}
		if ok {
			initTxn = 0
		}
	}
	writer = map[[2]int]int32{}
	counts = map[string]int{}
	dupDone := map[[2]int32]bool{}
	nilDone := map[int32]bool{}
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status == history.Aborted {
			continue
		}
		for i := range t.Ops {
			o := &t.Ops[i]
			if !isR(o) || !valid(o) {
				continue
			}
			committed := t.Status == history.Committed || judged[ti] && o.Value != history.NoValue
			k, v := o.Key, o.Value
			w := NoWriter
			typ := ""
			last, earlierSame := -1, false
			for j := 0; j < i; j++ {
				if p := &t.Ops[j]; isW(p) && valid(p) && p.Key == k {
					last = j
				}
			}
			if last >= 0 {
				for j := 0; j < last; j++ {
					if p := &t.Ops[j]; isW(p) && valid(p) && p.Key == k && p.Value == v {
						earlierSame = true
					}
				}
				switch {
				case t.Ops[last].Value == v:
					w = int32(ti)
				case earlierSame:
					typ = model.NotMyLastWrite
				default:
					typ = model.NotMyOwnWrite
				}
			} else {
				var ws []int32 // distinct writer txns of (k, v), not counting the initial txn for nil
				finalBy := map[int32]bool{}
				for wi := range h.Txns {
					for j := range h.Txns[wi].Ops {
						p := &h.Txns[wi].Ops[j]
						if !isW(p) || !valid(p) || p.Key != k || p.Value != v {
							continue
						}
						if v == history.NoValue && int32(wi) == initTxn {
							continue
						}
						if len(ws) == 0 || ws[len(ws)-1] != int32(wi) {
							ws = append(ws, int32(wi))
						}
						fin := true
						for q := j + 1; q < len(h.Txns[wi].Ops); q++ {
							if r := &h.Txns[wi].Ops[q]; isW(r) && valid(r) && r.Key == k {
								fin = false
							}
						}
						if fin {
							finalBy[int32(wi)] = true
						}
					}
				}
				dup := func() {
					if v == history.NoValue {
						if !nilDone[k] && committed {
							nilDone[k] = true
							typ = model.DuplicateWrite
						}
						return
					}
					if !dupDone[[2]int32{k, v}] && committed {
						dupDone[[2]int32{k, v}] = true
						typ = model.DuplicateWrite
					}
				}
				switch {
				case v == history.NoValue && len(ws) > 0:
					dup()
				case v == history.NoValue:
					w = Initial
				case len(ws) == 0 && initial(v):
					w = Initial
				case len(ws) == 0:
					typ = model.ThinAirRead
				case len(ws) >= 2:
					dup()
				case initial(v) && ws[0] != initTxn:
					dup()
				case ws[0] == initTxn:
					w = Initial
				case ws[0] == int32(ti):
					typ = model.FutureRead
				case h.Txns[ws[0]].Status == history.Aborted:
					typ = model.AbortedRead
				default:
					w = ws[0]
					if !finalBy[ws[0]] {
						typ = model.IntermediateRead
					}
				}
			}
			writer[[2]int{ti, i}] = w
			if committed && typ != "" {
				counts[typ]++
			}
		}
	}
	return writer, counts, initTxn
}

// FuzzReference: Analyze agrees with the reference reading on every read's
// writer, the anomaly counts and the initial transaction.
func FuzzReference(f *testing.F) {
	f.Add([]byte{0, 2, 1, 2, 4, 2, 0, 2, 4, 3})
	f.Add([]byte{0, 4, 1, 1, 5, 1, 4, 1, 2, 1, 0, 1, 0, 2, 0, 1, 4, 1})
	f.Add([]byte{1, 2, 1, 2, 5, 2, 0, 1, 0, 2})
	f.Add([]byte{0, 2, 1, 1, 5, 1, 0, 3, 0, 1, 4, 1, 1, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fuzzHistory(data)
		for _, iv := range []string{"", "0", "3"} {
			a := Analyze(h, Options{InitialValue: iv})
			w, c, it := reference(h, Options{InitialValue: iv})
			if a.InitTxn != it {
				t.Fatalf("iv=%q InitTxn %d, reference %d", iv, a.InitTxn, it)
			}
			for ref, want := range w {
				if got := a.WriterOf(int32(ref[0]), ref[1]); got != want {
					t.Fatalf("iv=%q WriterOf(%d,%d) = %d, reference %d\n%s", iv, ref[0], ref[1], got, want, h.TxnString(int32(ref[0])))
				}
			}
			if !maps.Equal(a.Counts, c) {
				t.Fatalf("iv=%q counts %v, reference %v", iv, a.Counts, c)
			}
		}
	})
}

package regread

import (
	"testing"

	"github.com/txray/txray/history"
)

// fuzzHistory turns bytes into a small history with mixed statuses, op
// kinds, nil values and out-of-range ids.
func fuzzHistory(data []byte) *history.History {
	h := history.New()
	for i := 0; i < 4; i++ {
		h.Keys.Int(int64(i))
		h.Sessions.Int(int64(i))
	}
	for i := 0; i < 6; i++ {
		h.Values.Int(int64(i))
	}
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	seq := map[int32]int32{}
	for len(data) > 0 && len(h.Txns) < 48 {
		hd := next()
		t := history.Txn{Status: history.Status(hd % 3), Session: int32(hd>>2)%5 - 1}
		if t.Session >= 0 {
			t.Seq = seq[t.Session]
			seq[t.Session]++
		}
		nops := int(next() % 6)
		for j := 0; j < nops; j++ {
			b := next()
			o := history.Op{Kind: history.Kind(b % 3), Key: int32(b>>2) % 4, Value: int32(next())%7 - 1}
			if b&0x80 != 0 && o.Kind == history.Read {
				o.IsList = true
			}
			if b == 0xff {
				o.Key = -3
			}
			if b == 0xfe {
				o.Value = 99
			}
			t.Ops = append(t.Ops, o)
		}
		h.Add(t)
	}
	return h
}

// FuzzAnalyze: Analyze never panics and its answers are consistent with the
// history: a writer wrote the value read, is not aborted, and the initial
// transaction satisfies its rule's basic conditions.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{0, 2, 1, 2, 4, 2, 0, 2, 4, 3})
	f.Add([]byte{0, 3, 1, 1, 5, 1, 4, 1, 2, 1, 0, 1})
	f.Add([]byte{1, 2, 1, 2, 5, 2, 0, 1, 0, 2})
	f.Add([]byte{0, 2, 0xff, 1, 0xfe, 3, 0, 1, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fuzzHistory(data)
		for _, iv := range []string{"", "0"} {
			a := Analyze(h, Options{InitialValue: iv})
			check := func(cond bool, format string, args ...any) {
				if !cond {
					t.Fatalf(format, args...)
				}
			}
			if a.InitTxn != -1 {
				check(a.InitTxn == 0 && h.Txns[0].Status == history.Committed, "bad InitTxn %d", a.InitTxn)
			}
			n := 0
			for ti := range h.Txns {
				tt := &h.Txns[ti]
				for i := range tt.Ops {
					o := &tt.Ops[i]
					w := a.WriterOf(int32(ti), i)
					if o.Kind != history.Read || o.IsList || tt.Status == history.Aborted {
						check(w == NoWriter, "non-read op %d/%d has writer %d", ti, i, w)
						continue
					}
					switch {
					case w == Initial:
						check(a.IsInitialValue(o.Value) || a.InitTxn >= 0, "initial read of %d", o.Value)
					case w == NoWriter:
					default:
						check(w >= 0 && int(w) < len(h.Txns), "writer %d out of range", w)
						check(h.Txns[w].Status != history.Aborted, "aborted writer %d", w)
						check(w != a.InitTxn, "init txn returned as writer")
						found := false
						for _, p := range h.Txns[w].Ops {
							if p.Kind == history.Write && p.Key == o.Key && p.Value == o.Value {
								found = true
							}
						}
						check(found, "writer %d did not write %d to %d", w, o.Value, o.Key)
						if w == int32(ti) {
							n++
						}
					}
				}
			}
			total := 0
			for _, c := range a.Counts {
				total += c
			}
			check(total == len(a.Anomalies), "counts %v vs %d anomalies", a.Counts, len(a.Anomalies))
			for _, x := range a.Anomalies {
				check(x.Explanation != "" && len(x.Txns) > 0, "unexplained %+v", x)
				for _, tt := range x.Txns {
					check(tt >= 0 && int(tt) < len(h.Txns), "anomaly txn %d", tt)
				}
			}
			_ = n
		}
	})
}

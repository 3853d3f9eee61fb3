package elle

import (
	"context"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// fuzzHistory turns arbitrary bytes into a small history, including
// malformed ids, unknown reads, odd statuses and mixed op kinds.
func fuzzHistory(data []byte) *history.History {
	h := history.New()
	for i := 0; i < 4; i++ {
		h.Keys.Int(int64(i))
		h.Sessions.Int(int64(i))
	}
	for i := 0; i < 8; i++ {
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
	for len(data) > 0 && len(h.Txns) < 64 {
		hd := next()
		t := history.Txn{Status: history.Status(hd % 3), Session: int32(hd>>2)%5 - 1}
		if hd&0x80 != 0 {
			t.HasTime, t.Invoke = true, int64(next())
			t.Complete = t.Invoke + int64(next()%16) - 2
		}
		if t.Session >= 0 {
			t.Seq = seq[t.Session]
			seq[t.Session]++
		}
		nops := int(next() % 6)
		for j := 0; j < nops; j++ {
			b := next()
			o := history.Op{Kind: history.Kind(b % 6), Key: int32(b>>3) % 5, Value: int32(next())%10 - 1}
			if o.Kind == history.Read && b&0x40 != 0 {
				t.SetList(&o, nil)
				n := int(next() % 5)
				for e := 0; e < n; e++ {
					t.ExtendList(&o, int32(next())%9)
				}
				o.ListUnknown = b&0x20 != 0
			}
			if b == 0xff {
				o.Key = -3
			}
			t.Ops = append(t.Ops, o)
		}
		h.Add(t)
	}
	return h
}

func fuzzCheck(t *testing.T, data []byte) {
	h := fuzzHistory(data)
	for _, c := range []check.Checker{ListAppend{}, RWRegister{}} {
		for _, m := range []string{"strict-serializable", "snapshot-isolation", "no-such-model"} {
			c.Applies(h, m)
			r, err := c.Check(context.Background(), h, check.Options{Model: m, MaxAnomalies: 2,
				Params: map[string]string{"sequential-keys": "true", "linearizable-keys": "true", "wfr-keys": "true"}})
			if err != nil {
				if !history.IsInputError(err) {
					t.Fatalf("%s: non-input error %v", c.Name(), err)
				}
				continue
			}
			if r.Verdict == check.Invalid && len(r.Anomalies) == 0 {
				t.Fatalf("%s: invalid without anomalies", c.Name())
			}
		}
	}
}

func FuzzListAppend(f *testing.F) {
	f.Add([]byte{1, 3, 2, 10, 66, 3, 1, 2, 0, 2, 72, 2, 1, 2})
	f.Add([]byte{0x80, 5, 3, 2, 18, 2, 66, 0, 2, 1, 2, 0x81, 9, 2, 1, 2, 3})
	f.Add([]byte{2, 4, 0xff, 1, 9, 9, 9, 9})
	f.Fuzz(fuzzCheck)
}

func FuzzRWRegister(f *testing.F) {
	f.Add([]byte{1, 3, 1, 10, 0, 3, 1, 9, 0, 2, 8, 2, 1, 2})
	f.Add([]byte{0x84, 1, 2, 1, 3, 0x88, 5, 3, 0, 3, 9, 2})
	f.Fuzz(fuzzCheck)
}

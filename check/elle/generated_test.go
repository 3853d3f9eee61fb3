package elle

import (
	"context"
	"testing"

	"github.com/txray/txray/check"
)

func TestGeneratedValid(t *testing.T) {
	for _, reg := range []bool{false, true} {
		for _, seed := range []uint64{1, 2, 3} {
			h := genHistory(genCfg{txns: 2000, ops: 4, clients: 10, keys: 20, readFrac: 0.5, abortFrac: 0.05, infoFrac: 0.05, register: reg, seed: seed})
			var c check.Checker = ListAppend{}
			if reg {
				c = RWRegister{}
			}
			for _, params := range []map[string]string{nil, {"sequential-keys": "true", "linearizable-keys": "true", "wfr-keys": "true"}} {
				r, err := c.Check(context.Background(), h, check.Options{Model: "strict-serializable", Params: params})
				if err != nil {
					t.Fatal(err)
				}
				// rw-register: unknown is allowed when only a version-order
				// completion could witness validity and none it tries does
				// (issue 12); never invalid.
				if r.Verdict != check.Valid && !(reg && completionUnknown(r)) {
					t.Errorf("reg=%v seed=%d params=%v: %v %s", reg, seed, params, r, r.Reason)
					for i, a := range r.Anomalies {
						if i > 3 {
							break
						}
						t.Log(a.Type, a.Explanation)
					}
				}
			}
		}
	}
}

package leopard

import (
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/model"
)

// TestNoValidWithoutCommittedTxn: offline and online (txray watch
// --checker leopard), a trace in which every transaction aborted gives
// unknown, never valid: no transaction a level constrains was seen
// (docs/design.md §6). A committed one alongside makes the verdict valid.
func TestNoValidWithoutCommittedTxn(t *testing.T) {
	cases := []struct {
		name  string
		specs []spec
		want  check.Verdict
	}{
		{"aborted-write-only", []spec{aborted(tx(1, 0, 10, "w x 1 1 2"))}, check.Unknown},
		{"aborted-read-and-write", []spec{aborted(tx(1, 0, 10, "w x 1 1 2")), aborted(tx(2, 20, 30, "r x nil 21 22"))}, check.Unknown},
		{"committed-write-beside-aborted", []spec{aborted(tx(1, 0, 10, "w x 1 1 2")), tx(2, 20, 30, "w x 2 21 22")}, check.Valid},
	}
	for _, m := range []string{"postgres:serializable", "postgres:repeatable-read", "mysql:repeatable-read"} {
		p, _ := model.LookupProfile(m)
		for _, c := range cases {
			t.Run(m+"/"+c.name, func(t *testing.T) {
				h := build(t, c.specs...)
				if r := run(t, h, m); r.Verdict != c.want {
					t.Errorf("offline: %s (%s), want %s", r.Verdict, r.Reason, c.want)
				}
				on := NewOnline(p, OnlineOptions{Keys: h.Keys, Values: h.Values})
				for i := range h.Txns {
					on.Add(&h.Txns[i])
				}
				if r := on.Flush(); r.Verdict != c.want {
					t.Errorf("online: %s (%s), want %s", r.Verdict, r.Reason, c.want)
				}
			})
		}
	}
}

package emme

import (
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// del deletes row k, installing the deleted version (tombstone) v.
func (b *hb) del(k, v int64) history.Op {
	return history.Op{Kind: history.Delete, Key: b.h.Keys.Int(k), Value: b.val(v)}
}

// TestDeleteAnomalies: deleted versions (history.Delete) in the dependency
// graph. A delete is a write of a version that matches no predicate (Adya
// 1999 §3.1.3–3.1.4: a delete changes the matches of every predicate that
// matched the version before it, so it is a predicate-rw target of a read
// that saw the row and a predicate-wr source of a read that did not), and
// that item reads observe as absent.
func TestDeleteAnomalies(t *testing.T) {
	runAnomalyCases(t, []anomalyCase{
		{
			// Delete skew: rows 5 and 15 exist (T0). T1 reads [0,9]
			// (row 5) and deletes 15; T2 reads [10,19] (row 15) and
			// deletes 5. The rows a predicate read returns are item reads
			// too, so each delete overwrites a row the other read: T1 -rw->
			// T2 -rw-> T1, G2-item (two adjacent anti-dependencies), which
			// SI allows and repeatable read forbids.
			name: "G2-item-delete-skew",
			build: func(b *hb) {
				b.ok(b.w(5, 1), b.w(15, 2)).
					ok(b.rp("k BETWEEN 0 AND 9", 5, 1), b.del(15, 3)).
					ok(b.rp("k >= 10 AND k <= 19", 15, 2), b.del(5, 4)).
					order(5, 1, 4).order(15, 2, 3)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G2-item"}},
				{"repeatable-read", check.Invalid, []string{"G2-item"}},
				{"snapshot-isolation", check.Valid, nil},
			},
		},
		{
			// Phantom after deletes: T1 deletes rows 5 and 15. T2 reads
			// [0,9] at row 5's deleted version (no rows) and re-inserts 15;
			// T3 reads [10,19] at row 15's deleted version and re-inserts
			// 5. Each re-insert changes the matches of the other's
			// predicate after the deleted version it evaluated: T2 -prw->
			// T3 -prw-> T2, G2 but not G2-item (no item dependency
			// between them): serializable forbids it, SI and repeatable
			// read allow it. Needs the version sets: without them the
			// absent rows could be unborn or deleted.
			name: "G2-phantom-reinsert-after-delete",
			build: func(b *hb) {
				b.ok(b.w(5, 1), b.w(15, 2)).
					ok(b.del(5, 9), b.del(15, 8)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, 9), b.w(15, 3)).
					ok(b.vs(b.rp("k >= 10 AND k <= 19"), 15, 8), b.w(5, 4)).
					order(5, 1, 9, 4).order(15, 2, 8, 3)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G2"}},
				{"snapshot-isolation", check.Valid, nil},
				{"repeatable-read", check.Valid, nil},
			},
		},
		{
			// T1's range read evaluated row 5 at T0's deleted version (no
			// rows); its item read then sees T2's re-insert: T1 -prw-> T2
			// -wr-> T1, G-single through a predicate anti-dependency,
			// which SI forbids and repeatable read allows.
			name: "G-single-predicate-reinsert-after-delete",
			build: func(b *hb) {
				b.ok(b.w(5, 1), b.del(6, 90)).
					ok(b.del(5, 9)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, 9), b.r(5, 3)).
					ok(b.w(5, 3)).
					order(5, 1, 9, 3).order(6, 90)
			},
			wants: []want{
				{"serializable", check.Invalid, []string{"G-single"}},
				{"snapshot-isolation", check.Invalid, []string{"G-single"}},
				{"repeatable-read", check.Valid, nil},
			},
		},
		{
			// An item read naming a deleted version (white-box: the
			// source knows which absent version it read) after a range
			// read that returned the row: T1 -rw-> T2 -wr-> T1 (the
			// returned row is an item read), G-single-item.
			name: "G-single-item-read-of-deleted-version",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).
					ok(b.rp("k BETWEEN 0 AND 9", 5, 1), b.r(5, 9)).
					ok(b.del(5, 9)).
					order(5, 1, 9)
			},
			wants: []want{
				{"repeatable-read", check.Invalid, []string{"G-single-item"}},
			},
		},
		{
			// T2's range read evaluated row 5 at T1's deleted version (so
			// it depends on the delete: predicate-wr T1 -> T2), and T1 read
			// T2's write of 7: a cycle of wr edges, G1c.
			name: "G1c-predicate-wr-from-delete",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).
					ok(b.del(5, 9), b.r(7, 70)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, 9), b.w(7, 70)).
					order(5, 1, 9).order(7, 70)
			},
			wants: []want{
				{"read-committed", check.Invalid, []string{"G1c"}},
				{"serializable", check.Invalid, []string{"G1c"}},
			},
		},
		{
			// A predicate read whose version set names a deleted version
			// returned the row anyway.
			name: "result-set-mismatch-returned-deleted-row",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).ok(b.del(5, 9)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 9", 5, 1), 5, 9)).
					order(5, 1, 9)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"result-set-mismatch"}}},
		},
		{
			// A row returned at a deleted version: no predicate matches it.
			name: "result-set-mismatch-row-is-a-deleted-version",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).ok(b.del(5, 9)).
					ok(b.rp("k BETWEEN 0 AND 9", 5, 9)).
					order(5, 1, 9)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"result-set-mismatch"}}},
		},
		{
			// Aborted delete observed: the version set names a deleted
			// version whose deleter aborted.
			name: "G1a-read-of-aborted-delete",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).txn(history.Aborted, b.del(5, 9)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, 9)).
					order(5, 1)
			},
			wants: []want{{"read-committed", check.Invalid, []string{"G1a"}}},
		},
		{
			// After its own delete a transaction must see the row absent.
			name: "internal-read-after-own-delete",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).ok(b.del(5, 9), b.r(5, 1)).order(5, 1, 9)
			},
			wants: []want{{"serializable", check.Invalid, []string{"internal"}}},
		},
		{
			// Insert, delete, re-insert, with range reads between them
			// whose version sets name what they evaluated: serial.
			name: "valid-delete-and-reinsert",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 9", 5, 1), 5, 1), b.del(5, 9)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, 9), b.w(5, 3)).
					ok(b.vs(b.rp("k >= 0", 5, 3), 5, 3)).
					order(5, 1, 9, 3)
			},
			wants: []want{{"serializable", check.Valid, nil}},
		},
		{
			// Without a version set, a range read that did not return row
			// 5 read either its unborn or its deleted version, which lie
			// on both sides of a change of the matches: unknown.
			name: "ambiguous-absent-row-after-delete-is-unknown",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).ok(b.del(5, 9)).ok(b.rp("k BETWEEN 0 AND 9")).
					order(5, 1, 9)
			},
			wants: []want{{"serializable", check.Unknown, nil}},
		},
		{
			// Same with the version set naming the deleted version: exact
			// and serial.
			name: "valid-range-read-of-deleted-row-with-version-set",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).ok(b.del(5, 9)).ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, 9)).
					order(5, 1, 9)
			},
			wants: []want{{"serializable", check.Valid, nil}},
		},
		{
			// T2 returned row 5 at its version before T1's delete but read
			// T1's write of 6: T2 -rw-> T1 (T1's delete is the next version
			// of the row T2 read) and T1 -wr-> T2: G-single-item.
			name: "G-single-item-stale-row-after-delete",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).
					ok(b.del(5, 9), b.w(6, 60)).
					ok(b.vs(b.rp("k BETWEEN 0 AND 5", 5, 1), 5, 1), b.r(6, 60)).
					order(5, 1, 9).order(6, 60)
			},
			wants: []want{
				{"repeatable-read", check.Invalid, []string{"G-single-item"}},
			},
		},
		{
			// An item read of nil on a key with deleted versions: which
			// absent version it read is not given, so unknown rather than
			// a guess.
			name: "nil-read-of-deleted-key-is-unknown",
			build: func(b *hb) {
				b.ok(b.w(5, 1)).ok(b.del(5, 9)).ok(b.r(5, -1)).order(5, 1, 9)
			},
			wants: []want{{"serializable", check.Unknown, nil}},
		},
	})
}

// TestDeleteCycleExplained: the delete skew's explanation names the deleted
// versions as such.
func TestDeleteCycleExplained(t *testing.T) {
	b := newHB()
	b.ok(b.w(5, 1), b.w(15, 2)).
		ok(b.del(5, 9), b.del(15, 8)).
		ok(b.vs(b.rp("k BETWEEN 0 AND 9"), 5, 9), b.w(15, 3)).
		ok(b.vs(b.rp("k >= 10 AND k <= 19"), 15, 8), b.w(5, 4)).
		order(5, 1, 9, 4).order(15, 2, 8, 3)
	r := run(t, b.h, "serializable")
	if len(r.Anomalies) != 1 || r.Anomalies[0].Type != "G2" {
		t.Fatalf("anomalies %+v", r.Anomalies)
	}
	a := r.Anomalies[0]
	for _, s := range []string{"row 5 at version 9 (deleted)", "row 15 at version 8 (deleted)", "predicate-rw", "T2 < T3 < T2"} {
		if !strings.Contains(a.Explanation, s) {
			t.Errorf("explanation lacks %q:\n%s", s, a.Explanation)
		}
	}
}

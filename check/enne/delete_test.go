package enne

import (
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
)

// del deletes row k, installing the deleted version (tombstone) v.
func (b *hb) del(k, v int64) history.Op {
	return history.Op{Kind: history.Delete, Key: b.h.Keys.Int(k), Value: b.val(v)}
}

// TestReplayDeletes: the replay with deleted versions (history.Delete): a
// deleted row is absent to item reads (nil) and matches no predicate; a
// row deleted before a reader's place in the expected order and still
// returned, or a row re-inserted and missed, breaks the order.
func TestReplayDeletes(t *testing.T) {
	runReplayCases(t, []replayCase{
		{
			name: "valid-delete-and-reinsert",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1), b.w(6, 2)).
					ok(2, b.rp("k BETWEEN 0 AND 9", 5, 1, 6, 2), b.del(5, 9)).
					ok(3, b.rp("k BETWEEN 0 AND 9", 6, 2), b.r(5, -1), b.r(5, 9), b.w(5, 3)).
					ok(4, b.rp("k >= 0", 5, 3, 6, 2)).
					ok(5, b.del(6, 8), b.r(6, -1), b.rp("k >= 0", 5, 3))
			},
			verdict: check.Valid,
		},
		{
			// T2 is placed after T1's delete but its range read still
			// returns the deleted row: a stale predicate read (the expected
			// order is not a serialization order).
			name: "ext-predicate-read-returns-deleted-row",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1)).ok(2, b.del(5, 9)).ok(3, b.rp("k BETWEEN 0 AND 9", 5, 1))
			},
			verdict: check.Invalid, types: []string{"ext"},
			expl: []string{"returned (5, 1); the state there gives no rows"},
		},
		{
			name: "ext-item-read-of-deleted-row",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1)).ok(2, b.del(5, 9)).ok(3, b.r(5, 1))
			},
			verdict: check.Invalid, types: []string{"ext"},
			expl: []string{"the state there is 5 = 9 (deleted by T1 at position 1)"},
		},
		{
			// Phantom by re-insert: T3's range read misses T2's re-insert
			// of a deleted row though T2 is before it in the order.
			name: "ext-phantom-reinsert-after-delete",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1)).ok(2, b.del(5, 9)).ok(3, b.w(5, 3)).ok(4, b.rp("k BETWEEN 0 AND 9"))
			},
			verdict: check.Invalid, types: []string{"ext"},
			expl: []string{"returned no rows; the state there gives (5, 3)"},
		},
		{
			name: "result-set-mismatch-row-is-a-deleted-version",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1)).ok(2, b.del(5, 9)).ok(3, b.rp("k BETWEEN 0 AND 9", 5, 9))
			},
			verdict: check.Invalid, types: []string{"result-set-mismatch"},
		},
		{
			name: "internal-read-after-own-delete",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1)).ok(2, b.del(5, 9), b.r(5, 1))
			},
			verdict: check.Invalid, types: []string{"internal"},
		},
		{
			name: "G1a-read-of-aborted-delete",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1)).at(0, history.Aborted, b.del(5, 9)).ok(2, b.r(5, 9))
			},
			verdict: check.Invalid, types: []string{"G1a"},
		},
		{
			// A floating (no commit position) read of nil on a key with
			// a deleted version: initial or deleted is not said, and its
			// place is not one interval: unknown, not a guess.
			name: "unknown-floating-nil-read-of-deleted-key",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1)).ok(2, b.del(5, 9)).ok(0, b.r(5, -1))
			},
			verdict: check.Unknown,
		},
		{
			// A floating reader naming the deleted version is placed
			// after the delete; its range read, which still returned the
			// row, holds only before it: no point explains both.
			name: "ext-floating-read-of-deleted-version-with-stale-range",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1), b.w(6, 2)).ok(2, b.del(5, 9)).ok(0, b.r(5, 9), b.rp("k >= 0", 5, 1, 6, 2))
			},
			verdict: check.Invalid, types: []string{"ext"},
			expl: []string{"no point of the expected serialization order"},
		},
		{
			name: "valid-floating-read-of-deleted-version",
			build: func(b *hb) {
				b.ok(1, b.w(5, 1), b.w(6, 2)).ok(2, b.del(5, 9)).ok(0, b.r(5, 9), b.rp("k >= 0", 6, 2))
			},
			verdict: check.Valid,
		},
	})
}

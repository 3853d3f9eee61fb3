package leopard

import (
	"math/bits"

	"github.com/txray/txray/history"
)

// Per-key state has two forms. A key being worked on (written, read, or
// holding versions whose order or lock holds a later check may still
// decide) is hot: a keyState in engine.hot, with its writers and their
// transactions. A key whose state is settled below the watermark
// (engine.gc: every writer's commit bounds are below it, no kept reads)
// and whose state is one committed version, or none, is cold online: its
// hot state is freed and what a later check needs of it is kept in its
// keySlot, a fixed-size record without pointers in a dense table indexed
// by key id (the collector never scans it). A stream that keeps creating
// keys holds one such record per key ever written, so this is the
// verifier's memory per key: sizeof(keySlot) = 64 bytes, against about
// 500 before (a hot key state, its version, the writer's transaction
// record and a copy of that transaction's operations). The writer's
// operations, which only explanations use, are in the spill log
// (spillLog): a cold version names its record by offset.
//
// A cold key becomes hot again when accessed (engine.key): its version
// gets back a writer whose transaction is a collected stand-in (gc and
// ended set, as the original was: it takes part in no certifier edge and
// no search) carrying the bounds the checks compare and the spill offset,
// so every check sees exactly the state it saw before the key cooled.
// Transactions are compared by identity only between writers of one key
// (one writer per transaction and key) and between a writer and the
// reading or writing transaction (never collected), so a stand-in can
// replace the original; the reporter, which names transactions of
// different keys together, deduplicates by index.

// keyChunk is the number of key slots per chunk (the table grows by whole
// chunks: no slack beyond the last one, and no copying as it grows).
const keyChunk = 1 << 12

// keySlot is the per-key record (see above). hot is 1 + the key's index
// in engine.hot, or 0 when the key is cold (or was never seen).
type keySlot struct {
	hot                     int32
	val                     int32 // the cold version's value
	idx                     int32 // its writer's transaction index
	op                      int32 // its writer's first write of the key
	init                    int32 // keyState.init
	flags                   uint8
	acqA, relB, relA, snapA int64 // the writer's bounds (see writer)
	spill                   int64 // the writer's record in the spill log
}

const (
	slotVersion   uint8 = 1 << iota // a cold version is held
	slotLocked                      // writer.locked
	slotList                        // writer.list
	slotDropped                     // keyState.dropped
	slotHasInit                     // keyState.hasInit
	slotForgotten                   // keyState.forgotten
	slotEarlier                     // writer.earlier, in engine.earlier
	slotSeen                        // the key had state (key recycling: its first access was checked against the filter)
)

// KeySlotBytes is what the online verifier keeps per settled key (the
// size of its slot), for sizing OnlineOptions.MaxKeys.
const KeySlotBytes = 64

// slot returns key k's record, growing the table. The chunk of a key whose
// state was forgotten (forget) comes back with every slot marked
// forgotten.
func (e *engine) slot(k int32) *keySlot {
	c := int(k) / keyChunk
	for c >= len(e.slots) {
		e.slots = append(e.slots, new([keyChunk]keySlot))
		e.chunkHot = append(e.chunkHot, 0)
		e.liveChunks++
	}
	if e.slots[c] == nil {
		ch := new([keyChunk]keySlot)
		for i, b := range e.forgot[c] {
			for ; b != 0; b &= b - 1 {
				ch[i*64+bits.TrailingZeros64(b)].flags = slotForgotten | slotDropped
			}
		}
		e.forgot[c] = nil
		e.slots[c] = ch
		e.liveChunks++
	}
	return &e.slots[c][int(k)%keyChunk]
}

// forget bounds the key table to maxChunks chunks (OnlineOptions.MaxKeys)
// by discarding the state of whole chunks of cold keys, oldest key ids
// first (keys are numbered in order of first appearance, so those are the
// keys a stream that keeps creating keys has stopped using). A key whose
// state was forgotten stays marked: its versions are unknown, so every
// later read of it is left unchecked (counted in stats.forgottenReads;
// the verdict is then unknown, never valid on evidence that was thrown
// away), while its new writes are tracked as usual (a forgotten writer
// was settled below the watermark, so no lock or first-updater conflict
// with it is possible for a transaction that is not late).
func (e *engine) forget() {
	for c := e.forgetFrom; c < len(e.slots) && e.liveChunks > e.maxChunks; c++ {
		ch := e.slots[c]
		if ch == nil || e.chunkHot[c] > 0 {
			continue
		}
		// Which keys had state (the others, interned but not yet
		// verified, are not forgotten when they come back).
		had := make([]uint64, keyChunk/64)
		for i := range ch {
			if f := ch[i].flags; f != 0 {
				if f&slotEarlier != 0 {
					delete(e.earlier, int32(c*keyChunk+i))
				}
				had[i/64] |= 1 << (i % 64)
				if f&slotForgotten == 0 {
					e.stats.forgottenKeys++
				}
			}
		}
		for len(e.forgot) < len(e.slots) {
			e.forgot = append(e.forgot, nil)
		}
		e.forgot[c] = had
		if e.rc != nil {
			// Give the ids back once nothing names them and the key
			// table needs them (recycle.go).
			e.rc.waiting = append(e.rc.waiting, c)
		}
		e.slots[c] = nil
		e.liveChunks--
		if c == e.forgetFrom {
			e.forgetFrom++
		}
	}
	if e.forgetFrom >= len(e.slots) || e.liveChunks > e.maxChunks {
		// Start over next time: chunks skipped as hot, or brought back
		// by an access, may be cold by then.
		e.forgetFrom = 0
	}
}

// key returns key k's hot state (made hot if it was cold) and marks it
// dirty (visited by the next collection). The pointer is valid until the
// key cools (engine.gc).
func (e *engine) key(k int32) *keyState {
	if k < 0 {
		return nil
	}
	s := e.slot(k)
	if s.hot == 0 {
		e.warm(k, s)
	}
	ks := e.hot[s.hot-1]
	if !ks.dirty {
		ks.dirty = true
		e.dirtyKeys = append(e.dirtyKeys, k)
	}
	return ks
}

// warm gives a cold (or new) key its hot state back from its slot.
func (e *engine) warm(k int32, s *keySlot) {
	var ks *keyState
	if n := len(e.hotPool); n > 0 {
		ks = e.hotPool[n-1]
		e.hotPool = e.hotPool[:n-1]
	} else {
		ks = &keyState{}
	}
	if s.flags != 0 {
		e.stats.warmed++
	} else if e.suspect(k) {
		// A key first seen whose name may be a forgotten key's
		// (recycle.go): its earlier versions are unknown.
		s.flags = slotForgotten | slotDropped
		e.stats.suspectKeys++
	}
	ks.dropped = s.flags&slotDropped != 0
	ks.forgotten = s.flags&slotForgotten != 0
	ks.init, ks.hasInit = s.init, s.flags&slotHasInit != 0
	if s.flags&slotVersion != 0 {
		t := &txn{spill: s.spill, idx: s.idx, status: history.Committed, begin: s.snapA, snapA: s.snapA,
			relB: s.relB, relA: s.relA, ended: true, gc: true}
		ks.writers = append(ks.writers, writer{t: t, val: s.val, op: s.op, acqA: s.acqA, relB: s.relB, relA: s.relA,
			snapA: s.snapA, status: history.Committed, hasVersion: true, sureCommit: true,
			locked: s.flags&slotLocked != 0, list: s.flags&slotList != 0})
		if s.flags&slotEarlier != 0 {
			ev := e.earlier[k]
			delete(e.earlier, k)
			ks.writers[0].earlier = &ev
		}
	}
	e.chunkHot[int(k)/keyChunk]++
	if n := len(e.hotFree); n > 0 {
		s.hot = e.hotFree[n-1] + 1
		e.hotFree = e.hotFree[:n-1]
		e.hot[s.hot-1] = ks
	} else {
		e.hot = append(e.hot, ks)
		s.hot = int32(len(e.hot))
	}
	*s = keySlot{hot: s.hot}
}

// cool moves settled key k (not dirty, no reads kept) into its slot when
// its state fits: online only (offline nothing is spilled), at most one
// version, committed, written by a transaction whose record is spilled,
// and no record of collected list appends (keyState.gone). The writer's
// earlier values of the key (a transaction that wrote it more than once)
// go to engine.earlier. It reports whether it did; a
// key that does not fit stays hot (and keeps exactly its versions).
func (e *engine) cool(k int32, ks *keyState) bool {
	if !e.compact || e.noCool || len(ks.reads) > 0 || ks.gone != nil || len(ks.writers) > 1 {
		return false
	}
	var c keySlot
	if e.rc != nil {
		c.flags |= slotSeen
	}
	if ks.dropped {
		c.flags |= slotDropped
	}
	if ks.hasInit {
		c.flags |= slotHasInit
	}
	if ks.forgotten {
		c.flags |= slotForgotten
	}
	c.init = ks.init
	if len(ks.writers) == 1 {
		w := &ks.writers[0]
		if !w.sureCommit || !w.hasVersion || w.status != history.Committed || !w.t.gc || w.t.spill == 0 {
			return false
		}
		if w.earlier != nil {
			// Rare (a transaction that wrote the key more than once):
			// its earlier values go to a side table.
			if e.earlier == nil {
				e.earlier = map[int32][]int32{}
			}
			e.earlier[k] = *w.earlier
			c.flags |= slotEarlier
		}
		c.flags |= slotVersion
		if w.locked {
			c.flags |= slotLocked
		}
		if w.list {
			c.flags |= slotList
		}
		c.val, c.idx, c.op = w.val, w.t.idx, w.op
		c.acqA, c.relB, c.relA, c.snapA, c.spill = w.acqA, w.relB, w.relA, w.snapA, w.t.spill
	}
	s := e.slot(k)
	e.chunkHot[int(k)/keyChunk]--
	h := s.hot - 1
	e.hot[h] = nil
	e.hotFree = append(e.hotFree, h)
	*s = c
	w := ks.writers[:0]
	clear(ks.writers[:cap(ks.writers)])
	if cap(w) > 4 {
		w = nil
	}
	*ks = keyState{writers: w}
	if len(e.hotPool) < 1024 {
		e.hotPool = append(e.hotPool, ks)
	}
	e.stats.cooled++
	return true
}

// keyVersions returns the number of versions key k holds (hot or cold)
// and whether it is cold (for tests and the memory benchmark).
func (e *engine) keyVersions(k int32) (n int, cold bool) {
	if c := int(k) / keyChunk; c >= len(e.slots) || e.slots[c] == nil {
		return 0, false
	}
	s := e.slot(k)
	if s.hot == 0 {
		if s.flags&slotVersion != 0 {
			return 1, true
		}
		return 0, s.flags != 0
	}
	return len(e.hot[s.hot-1].writers), false
}

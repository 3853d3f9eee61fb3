package aion

import (
	"fmt"
	"time"

	"github.com/txray/txray/history"
)

// Per-session state under strong-session-snapshot-isolation, and its bound
// (Config.MaxSessions; issue 12).
//
// The Session axiom (Chronos, ICDE 2024, §III-B; TimeKiller's SESSION):
// in each session a transaction starts no earlier than its predecessor
// committed (prev.cts ≤ next.sts). Transactions arrive in session order
// within a session, so the check needs, per session, only its last
// transaction's commit timestamp and id (sessEnt). The transaction itself
// is kept too while it is recent, so that an explanation can list its ops:
// a queue of the recent arrivals (sessQ) drops that pointer FinalAfter
// after the arrival, or as soon as the queue holds more than MaxSessions
// entries, so that no session keeps a transaction (and the chunk of ops it
// was decoded into) alive longer than the window does.
//
// Forgetting. With MaxSessions > 0, a tick that finds more sessions
// retained forgets idle ones, the coldest first, down to 7/8 of the bound:
// a clock hand over the entries spares a session that had a transaction
// since the hand last passed it (a second chance). A forgotten session's
// name goes into a Bloom filter (forgot: 32 bytes per session of the bound,
// allocated at the first forgetting; hashed with the checker's seed,
// hash.go), and the commit timestamp of its last transaction raises
// forgotMax. A transaction of a session that is not retained is then
//
//   - checked exactly when it starts at or after forgotMax: whichever
//     forgotten transaction was its predecessor committed at or before
//     forgotMax, so the axiom holds (and a new session has no
//     predecessor);
//   - else, when the filter holds its session's name (a returning session,
//     or a false positive), not checked: it is counted in
//     "forgotten_session_checks" and the verdict is unknown with the
//     reason, never valid on a predecessor that was forgotten;
//   - else new: the filter has no false negatives, so the session was
//     never forgotten and has no predecessor.
//
// A session is forgotten only when it has been idle for a whole turn of the
// clock hand, so in a stream whose sessions come and go its last commit is
// older than what arrives now: forgetting costs a check only for a
// transaction that arrives later than that, or a session that returns with
// such a start.

// SessionBytes is about what the checker keeps per retained session (for
// sizing MaxSessions): the entry (80 bytes), its name and the last
// transaction's id (16–32), the name's map slot (about 48 with the map's
// slack), the queue entry (24) and the filter's share (32).
const SessionBytes = 224

// sessEnt is a retained session: its name ("" for a free entry), its last
// transaction's id, commit timestamp and sequence number (Txn.seq), the
// transaction itself while recent (nil after), and the clock hand's
// reference bit.
type sessEnt struct {
	name string
	id   string
	cts  history.Timestamp
	seq  int64
	t    *Txn
	ref  bool
}

// sessRef is a queue entry: session entry i got transaction seq at
// arrival time at (nanoseconds since the checker started).
type sessRef struct {
	i   int32
	seq int64
	at  int64
}

// sessions is the per-session state (see above).
type sessions struct {
	idx  map[string]int32
	tab  []sessEnt
	free []int32
	n    int // retained
	hand int
	q    []sessRef
	qh   int
	// the filter of forgotten session names, the latest commit of a
	// forgotten session's last transaction, sessions forgotten,
	// transactions not checked (and the first)
	forgot    bloom
	forgotMax history.Timestamp
	nforgot   int64
	unchecked int64
	first     string
}

// sessHash is the filter's hash of session name s.
func (c *Checker) sessHash(s string) uint64 { return seededHash(c.seed^0x5E5510A5E5510A5E, s) }

// checkSession checks t (committed, of a named session) against its
// session's predecessor (the Session axiom, see above) and makes it the
// session's last transaction.
func (c *Checker) checkSession(t *Txn, now time.Time) {
	ss := &c.sess
	i, ok := ss.idx[t.Session]
	if ok {
		if e := &ss.tab[i]; t.StartTS.Less(e.cts) {
			p := "T(" + e.id + ") [ops no longer retained]"
			if e.t != nil {
				p = c.txnString(e.t)
			}
			c.report(TypeSession, "", fmt.Sprintf("%s and %s are consecutive in session %s, but %s started at %s, before its predecessor committed at %s. Session axiom: prev.cts ≤ next.sts.",
				p, c.txnString(t), t.Session, name(t), t.StartTS, e.cts))
		}
	} else {
		if ss.forgotMax.Set && t.StartTS.Less(ss.forgotMax) && ss.forgot.has(c.sessHash(t.Session)) {
			// its predecessor may have been forgotten, and may have
			// committed after t started
			ss.unchecked++
			if ss.first == "" {
				ss.first = fmt.Sprintf("%s (sts %s) of session %s, forgotten sessions' last commits up to %s", name(t), t.StartTS, t.Session, ss.forgotMax)
			}
		}
		if ss.idx == nil {
			ss.idx = map[string]int32{}
		}
		if k := len(ss.free); k > 0 {
			i = ss.free[k-1]
			ss.free = ss.free[:k-1]
		} else {
			i = int32(len(ss.tab))
			ss.tab = append(ss.tab, sessEnt{})
		}
		ss.idx[t.Session] = i
		ss.n++
	}
	c.release(ss.tab[i].t)
	t.holds++
	ss.tab[i] = sessEnt{name: t.Session, id: t.ID, cts: t.CommitTS, seq: t.seq, t: t, ref: true}
	ss.q = append(ss.q, sessRef{i: i, seq: t.seq, at: int64(now.Sub(c.start))})
}

// stripSessions drops the transactions the session entries keep for
// explanations once they arrived FinalAfter ago (before: that time, in
// nanoseconds since the checker started), or beyond MaxSessions of them
// (see above).
func (c *Checker) stripSessions(before int64) {
	ss := &c.sess
	m := c.cfg.MaxSessions
	for ss.qh < len(ss.q) {
		r := ss.q[ss.qh]
		if r.at > before && (m <= 0 || len(ss.q)-ss.qh <= m) {
			break
		}
		if e := &ss.tab[r.i]; e.seq == r.seq {
			c.release(e.t)
			e.t = nil
		}
		ss.qh++
	}
	if ss.qh > 1024 && ss.qh > len(ss.q)/2 {
		n := copy(ss.q, ss.q[ss.qh:])
		ss.q = ss.q[:n]
		ss.qh = 0
		if cap(ss.q) > 4096 && n < cap(ss.q)/4 {
			ss.q = append([]sessRef(nil), ss.q...)
		}
	}
}

// maybeForgetSessions enforces MaxSessions (see above); it runs at the end
// of a tick.
func (c *Checker) maybeForgetSessions() {
	ss := &c.sess
	m := c.cfg.MaxSessions
	if m <= 0 || ss.n <= m {
		return
	}
	if ss.forgot.empty() {
		ss.forgot = c.newFilter(8 * 32 * uint64(m))
	}
	target := m - m/8
	n := len(ss.tab)
	for scanned := 0; scanned < 2*n && ss.n > target; scanned++ {
		if ss.hand >= n {
			ss.hand = 0
		}
		e := &ss.tab[ss.hand]
		i := int32(ss.hand)
		ss.hand++
		if e.name == "" {
			continue // free
		}
		if e.ref {
			e.ref = false
			continue
		}
		ss.forgot.add(c.sessHash(e.name))
		if !ss.forgotMax.Set || ss.forgotMax.Less(e.cts) {
			ss.forgotMax = e.cts
		}
		delete(ss.idx, e.name)
		c.release(e.t)
		*e = sessEnt{}
		ss.free = append(ss.free, i)
		ss.n--
		ss.nforgot++
	}
}

package leopard

import (
	"fmt"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/model"
)

// OnlineOptions configure an online verifier.
type OnlineOptions struct {
	// Keys and Values render ids in explanations (optional).
	Keys, Values *history.Interner
	// MaxPerType caps the anomalies listed per type (0 = 8).
	MaxPerType int
	// InitialUnknown: keys start with unknown values (the first read of a
	// key fixes its initial value) instead of nil.
	InitialUnknown bool
	// Sessions declares, before any transaction arrives, the sessions
	// that will send transactions: each holds the watermark back from the
	// start, so a session whose first transaction arrives after others
	// have been dispatched is not late. Sessions not declared are
	// registered when first seen.
	Sessions []int32
	// Window: the caller bounds arrival instead of the sessions (txray
	// watch: the before-timestamp of the traffic received one window
	// ago): only Advance moves the watermark, so a session first seen
	// late, or an idle one, neither holds dispatch back nor is missed
	// while it arrives within the caller's bound.
	Window bool
	// MaxKeys bounds the keys whose state is retained (0 = no bound):
	// beyond it, the state of the oldest settled keys is discarded, 4,096
	// key ids at a time, and a later read of such a key is not checked
	// (the verdict is then unknown, with the reason, unless a violation
	// was found: never valid on evidence that was thrown away). Each
	// retained settled key costs KeySlotBytes.
	MaxKeys int
	// RecycleKeys (with MaxKeys and a Keys interner made by
	// history.NewRecyclingInterner, which must be the one the caller
	// interns keys with): once Keys holds more than KeyTableIds × MaxKeys
	// ids, the ids of the oldest forgotten keys are released in it (when
	// nothing names them), so the interner is bounded too. A released key
	// that comes back is recognised by a fixed-size filter of forgotten
	// names (8 bytes per MaxKeys; false positives make new
	// keys count as forgotten: unknown reads, never a false verdict). See
	// recycle.go.
	RecycleKeys bool
	// ForgetSessions (with Window): a session idle past the window (its
	// traces all dispatched, its last one behind the frontier) is
	// forgotten, so the state per session is bounded by the sessions
	// active within the window; one that returns is verified as a new
	// session, which gives the same result (engine.forgetIdle).
	// OnForgetSession, if set, is told each session forgotten (the caller
	// may release its id).
	ForgetSessions  bool
	OnForgetSession func(session int32)
	// SpillLimit bounds the spill file of explanation records, in bytes
	// (0 = no bound): beyond it the oldest records are dropped, half the
	// limit at a time, and an explanation naming such a transaction names
	// it by index only and says so (verdicts never use these records).
	SpillLimit int64
}

// Online is the streaming verifier (Leopard §V online mode): transactions
// are added as they complete, traces are dispatched in batches up to the
// watermark (the smallest latest before-timestamp over open sessions), and
// state no future transaction can need is collected, so memory stays flat
// but for per-key state: every key written keeps its last version, in a
// 64-byte record once settled (keys.go; bounded by OnlineOptions.MaxKeys),
// and key and value ids must be stable for the verifier's lifetime (but for
// the key ids the verifier itself releases, OnlineOptions.RecycleKeys). The
// records of collected transactions, for explanations only, go to an
// unlinked temporary file (spill.go), closed by Flush. A session that stops sending holds
// the watermark back: call EndSession, or Advance with a time bound. Not
// safe for concurrent use.
type Online struct {
	cfg  Config
	e    *engine
	done bool
}

// NewOnline verifies the mechanisms of a DBMS profile.
func NewOnline(p model.Profile, opts OnlineOptions) *Online {
	return newOnline(ProfileConfig(p), opts)
}

// NewOnlineModel verifies a DBMS profile or a plain model by name (see
// Resolve).
func NewOnlineModel(name string, opts OnlineOptions) (*Online, error) {
	c, ok := Resolve(name)
	if !ok {
		return nil, fmt.Errorf("leopard: no mechanism decomposition for %q", name)
	}
	return newOnline(c, opts), nil
}

func newOnline(c Config, opts OnlineOptions) *Online {
	rep := newReporter(opts.Keys, opts.Values, nil, opts.MaxPerType, c.Plain)
	e := newEngine(c.mechs(opts.InitialUnknown), rep)
	e.window = opts.Window
	e.compact = true
	e.spill = &spillLog{limit: opts.SpillLimit}
	if opts.MaxKeys > 0 {
		e.maxChunks = max(1, (opts.MaxKeys+keyChunk-1)/keyChunk)
		if opts.RecycleKeys && opts.Keys != nil && opts.Keys.Recycling() {
			e.rc = newRecycler(opts.Keys, opts.MaxKeys)
			rep.rc = e.rc
		}
	}
	e.forgetSessions, e.onForget = opts.ForgetSessions, opts.OnForgetSession
	rep.spill = e.spill
	for _, s := range opts.Sessions {
		e.declare(s)
	}
	return &Online{cfg: c, e: e}
}

// Add feeds completed transactions. Within a session (Txn.Session >= 0,
// the client) transactions must arrive in session order; a transaction
// with Session < 0 is its own client. A transaction that began before
// the dispatch frontier (traces already verified began after it: a
// session first seen late and not declared in OnlineOptions.Sessions, a
// transaction without session, or one below an Advance bound) is late:
// it is verified as far as possible, but the final verdict is unknown
// (checks already made missed it), with the reason. Each transaction needs its client
// interval (HasTime); one without is not verified, but its writes become
// possible versions of the reads verified after it arrives. The verifier
// keeps the pointers until the transactions are collected: do not modify
// them after Add. Txn.Index names the transaction in anomalies.
func (o *Online) Add(txns ...*history.Txn) {
	if o.done {
		return
	}
	e := o.e
	for _, t := range txns {
		if !t.HasTime {
			e.addFloating(t)
			continue
		}
		e.addTxn(t.Session, t)
	}
	e.drain(e.watermark())
}

// Advance declares that no transaction still to be added has an operation
// that began before t (e.g. a wall-clock bound from the recorder), so
// traces up to t are dispatched even if some client is idle.
func (o *Online) Advance(t int64) {
	if t > o.e.manual {
		o.e.manual = t
	}
	o.e.drain(o.e.watermark())
}

// EndSession declares that session s will add no more transactions, so it
// no longer holds the watermark back (an idle session otherwise delays
// dispatch, and memory grows, until Advance or Flush).
func (o *Online) EndSession(s int32) {
	o.e.endSession(s)
	o.e.drain(o.e.watermark())
}

// Stats returns the running statistics (traces, live transactions, ...).
func (o *Online) Stats() map[string]int64 {
	s := &o.e.stats
	return map[string]int64{"traces": s.traces, "txns": s.txns, "live_txns": s.liveTxns, "peak_live_txns": s.peakLive,
		"gc_versions": s.gcVersions, "gc_txns": s.gcTxns, "pending_reads": int64(len(o.e.pending)),
		"anomalies": int64(len(o.e.rep.anomalies)), "late_txns": s.lateTxns,
		"hot_keys": int64(len(o.e.hot) - len(o.e.hotFree)), "spilled_txns": o.e.spill.records,
		"cooled_keys": s.cooled, "warmed_keys": s.warmed,
		"forgotten_keys": s.forgottenKeys, "forgotten_reads": s.forgottenReads,
		"suspect_keys": s.suspectKeys, "forgotten_sessions": s.forgottenSessions, "sessions": int64(len(o.e.cmap)),
		"spill_bytes": o.e.spill.size(), "spill_dropped_records": o.e.spill.dropped}
}

// Flush verifies everything still buffered and returns the final result.
// The verifier accepts no more transactions afterwards.
func (o *Online) Flush() *check.Result {
	if !o.done {
		o.done = true
		o.e.finish()
		// Explanations are built when a violation is found, so the
		// spilled records are not needed any more.
		o.e.spill.close()
	}
	return o.e.result(o.cfg)
}

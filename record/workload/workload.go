// Package workload defines the transaction workloads `txray run` drives
// against a database, and how each micro-operation is encoded in SQL and
// recorded in the txray history model (history.Op).
//
// A workload plans a transaction (Plan) from a client's random stream, then
// executes the plan on a db.Conn inside BEGIN/COMMIT (Exec), recording each
// micro-op with its client invoke/complete times in a Recorder. The runner
// owns BEGIN, COMMIT, error classification and retries; a workload only runs
// statements.
//
// Values written are unique per run (one shared counter), as Elle and
// Cobra require for recoverable write-read edges.
package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/txray/txray/history"
	"github.com/txray/txray/record/db"
)

// Op is one recorded micro-op, in raw (not yet interned) form.
type Op struct {
	Kind history.Kind
	// Key is the integer key; KeyS, when non-empty, is a string key used
	// instead.
	Key  int64
	KeyS string
	// Value is the value written or appended, or the register value read
	// (HasValue false: nil, the initial state, or unknown if !Done).
	Value    int64
	HasValue bool
	// List is a list read's result (Done and IsList).
	List   []int64
	IsList bool
	// Pred is a predicate read's table, WHERE text and rows.
	Pred *Pred
	// Invoke/Complete are client times (ns since run start); Done reports
	// that the statement returned, so the result fields are meaningful.
	Invoke, Complete int64
	Done             bool
	// Prev is the version a write replaced, when the write statement
	// returned it (PrevKnown; PrevNone: it inserted the row): the
	// recorder chains these into the version order (record/certificate.go).
	Prev                int64
	PrevKnown, PrevNone bool
	// Row is a write's row image (history.RowImage): the values of its
	// table's row columns as the write set them, or Deleted for a DELETE
	// recorded as a write of a tombstone value. Only for tables the
	// workload declares (TableDecls).
	Row *history.RowImage
}

// Pred is a predicate read.
type Pred struct {
	Table string
	Where string
	Rows  []PredRow
	// Snapshot is the PostgreSQL snapshot the statement read under
	// (pg_current_snapshot() evaluated in the statement itself, so at read
	// committed it is the statement's own snapshot), "" when not captured;
	// the recorder derives the read's version set from it
	// (record/certificate.go).
	Snapshot string
	// Shadow (HasShadow) is every row of the table as a shadow transaction
	// that imported the statement's snapshot read it
	// (Config.ShadowVersionSets); the reader's own uncommitted writes are
	// not in it.
	Shadow    []PredRow
	HasShadow bool
	// Locking: the statement was a locking read (MariaDB/MySQL SELECT ...
	// FOR UPDATE: an InnoDB current read of the newest committed versions,
	// not of the transaction's snapshot).
	Locking bool
}

// PredRow is one row a predicate read returned: its key (Key, or KeyS when
// non-empty) and value (HasValue false: nil, a row never updated).
type PredRow struct {
	Key      int64
	KeyS     string
	Value    int64
	HasValue bool
}

// ErrUserAbort is returned by a workload that rolls back on purpose (TPC-C
// New-Order with an unused item); the runner records the transaction as
// aborted and does not retry it.
var ErrUserAbort = errors.New("transaction rolled back by the workload")

// Recorder collects the micro-ops of one transaction attempt.
type Recorder struct {
	Ops   []Op
	Clock func() int64
}

// Start records the invocation of op and returns its index.
func (r *Recorder) Start(op Op) int {
	op.Invoke = r.Clock()
	r.Ops = append(r.Ops, op)
	return len(r.Ops) - 1
}

// Finish marks op i complete.
func (r *Recorder) Finish(i int) {
	o := &r.Ops[i]
	o.Complete, o.Done = r.Clock(), true
}

// Reset clears the recorder for a new attempt, keeping capacity.
func (r *Recorder) Reset() { r.Ops = r.Ops[:0] }

// Config is the workload shape shared by all workloads.
type Config struct {
	// Keys is the number of active keys (default 10).
	Keys int
	// Ops is the number of micro-ops per transaction (default 4).
	Ops int
	// ReadRatio is the probability that a micro-op (or, for blindw-rw, a
	// transaction) reads (default 0.5).
	ReadRatio float64
	// Dist is uniform, zipfian or hotspot.
	Dist string
	// MaxWritesPerKey retires a key after that many writes and replaces it
	// with a fresh one (Elle's key rotation keeps lists and version chains
	// short); 0 never retires.
	MaxWritesPerKey int
	// NoCertificate turns off the certificate capture of the workloads
	// that have one (the replaced version of each write, the snapshot of
	// each predicate read) and the recorder's derivation of a certificate
	// (no version order, no version sets): the baseline for measuring its
	// cost.
	NoCertificate bool
	// ShadowVersionSets (PostgreSQL, predicate workload; tests) also reads
	// each range read's version set the seed paper's way: the read exports
	// its statement's snapshot (pg_export_snapshot()), and a shadow
	// transaction on a second connection imports it (SET TRANSACTION
	// SNAPSHOT) and reads every row of the table, before the reading
	// transaction goes on. The recorder compares these with the sets it
	// derives from snapshots and uses them where it cannot derive one.
	// It costs a second connection per client and four statements per read.
	ShadowVersionSets bool
	// Deletes (predicate workload; txray run --deletes) makes an eighth of
	// the writes range DELETEs, recorded as deletes (history.Delete). A
	// range read without a version set cannot say whether a row it did not
	// return was unborn or deleted once a key was deleted and re-inserted,
	// so emme's verdict then is often unknown; where every read has a
	// version set (PostgreSQL at repeatable read and serializable, MariaDB
	// at repeatable read) it stays definite, and enne needs none.
	// record.Config.DefaultDeletes (txray run without --deletes) turns it
	// on exactly there.
	Deletes bool
	// TxnSnapshot (set by the recorder) says the recorder reads each
	// transaction's snapshot with BEGIN (PostgreSQL at repeatable read and
	// serializable, certificate capture on), which is every statement's
	// snapshot there: the predicate workload's range reads then return no
	// snapshot of their own (one column, one row and a function call less
	// per read); at read committed each statement has its own and they do.
	TxnSnapshot bool
	// CommitOrder (set by the recorder, Shared.SetCommitOrder) says the
	// run has an exact commit order of every committed writer (PostgreSQL:
	// the logical decoding slot), from which the recorder derives each
	// key's version order (writers hold row locks until they commit): the
	// writes then need not return the version they replaced, nor deletes
	// store tombstones (versionChain), and the capture costs no more than
	// plain upserts.
	CommitOrder bool
}

// Spec is a planned micro-op: kind and key; write values are drawn at
// execution time so a retry writes fresh unique values.
type Spec struct {
	Kind history.Kind
	Key  int64
	// Lo/Hi bound a range for predicate reads.
	Lo, Hi int64
	// RMW marks a read immediately followed by a write of the same key.
	RMW bool
	// Update marks a predicate update (Kind PredRead): the rows matching
	// [Lo, Hi] are read and each is written.
	Update bool
}

// Plan is a planned transaction: micro-op specs (key-value workloads) or a
// procedure with arguments (smallbank, tpcc).
type Plan struct {
	Ops  []Spec
	Proc int
	Args []int64
}

// Workload is one benchmark.
type Workload interface {
	// Name is the --workload name.
	Name() string
	// Setup returns the statements that (re)create and load the workload's
	// tables for cfg (defaults filled).
	Setup(d db.DB, cfg Config) []string
	// Plan draws the next transaction for a client.
	Plan(g *Gen) Plan
	// Exec runs p on c inside an open transaction, recording micro-ops in
	// rec. It returns the first statement error.
	Exec(ctx context.Context, c db.Conn, g *Gen, p *Plan, rec *Recorder) error
}

// PredicateReader is implemented by workloads that record predicate reads
// (history.PredRead), so the history header can declare them.
type PredicateReader interface {
	PredicateReads() bool
}

// TableDecls is implemented by workloads whose WHERE clauses use columns
// beyond (k, v): the tables they declare in the history header (key
// patterns and row columns, history/schema.go), and whose writes carry row
// images (Op.Row).
type TableDecls interface {
	Tables() []history.Table
}

// Names lists the workloads New accepts.
func Names() []string {
	ns := make([]string, 0, len(registry))
	for n := range registry {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

var registry = map[string]func(d db.Dialect) Workload{}

func reg(name string, f func(d db.Dialect) Workload) { registry[name] = f }

// New returns the named workload for dialect d.
func New(name string, d db.Dialect) (Workload, error) {
	f, ok := registry[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return f(d), nil
}

// Shared is state shared by every client of one run: the key pool and the
// unique-value counter. It is safe for concurrent use.
type Shared struct {
	cfg    Config
	mu     sync.Mutex
	active []int64
	writes []int
	next   int64
	vals   atomic.Int64
}

// NewShared prepares shared state for cfg (filling defaults).
func NewShared(cfg Config) (*Shared, error) {
	if cfg.Keys <= 0 {
		cfg.Keys = 10
	}
	if cfg.Ops <= 0 {
		cfg.Ops = 4
	}
	if cfg.ReadRatio < 0 || cfg.ReadRatio > 1 {
		return nil, fmt.Errorf("read ratio %v not in [0,1]", cfg.ReadRatio)
	}
	switch cfg.Dist {
	case "":
		cfg.Dist = "uniform"
	case "uniform", "zipfian", "hotspot":
	default:
		return nil, fmt.Errorf("unknown key distribution %q (want uniform, zipfian or hotspot)", cfg.Dist)
	}
	s := &Shared{cfg: cfg, active: make([]int64, cfg.Keys), writes: make([]int, cfg.Keys)}
	for i := range s.active {
		s.active[i] = int64(i)
	}
	s.next = int64(cfg.Keys)
	return s, nil
}

// SetCommitOrder sets Config.CommitOrder; call it before the clients
// start.
func (s *Shared) SetCommitOrder(on bool) { s.cfg.CommitOrder = on }

// Config returns the configuration with defaults filled.
func (s *Shared) Config() Config { return s.cfg }

// Value returns a fresh unique value (1, 2, 3, ...).
func (s *Shared) Value() int64 { return s.vals.Add(1) }

// Values reserves n fresh unique values and returns the first; the others
// follow it (first+1, ..., first+n-1).
func (s *Shared) Values(n int64) int64 { return s.vals.Add(n) - n + 1 }

// key returns the key in slot i, counting a planned write; a slot whose key
// reached MaxWritesPerKey gets a fresh key for later plans.
func (s *Shared) key(i int, write bool) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.active[i]
	if write && s.cfg.MaxWritesPerKey > 0 {
		s.writes[i]++
		if s.writes[i] >= s.cfg.MaxWritesPerKey {
			s.active[i], s.writes[i] = s.next, 0
			s.next++
		}
	}
	return k
}

// Gen is one client's generator: its random stream and the shared state.
type Gen struct {
	R    *rand.Rand
	S    *Shared
	zipf *rand.Zipf
	// Shadow opens the client's second connection for shadow reads
	// (Config.ShadowVersionSets); nil when there is none.
	Shadow func(ctx context.Context) (db.Conn, error)
}

// NewGen returns a generator for client id under seed.
func NewGen(s *Shared, seed uint64, id int) *Gen {
	r := rand.New(rand.NewPCG(seed, uint64(id)*0x9e3779b97f4a7c15+1))
	g := &Gen{R: r, S: s}
	if s.cfg.Dist == "zipfian" && s.cfg.Keys > 1 {
		g.zipf = rand.NewZipf(r, 1.1, 1, uint64(s.cfg.Keys-1))
	}
	return g
}

// Slot draws a key slot by the configured distribution: uniform; zipfian
// (s = 1.1, slot 0 hottest); hotspot (80% of accesses to the first 20% of
// slots).
func (g *Gen) Slot() int {
	n := g.S.cfg.Keys
	switch {
	case g.zipf != nil:
		return int(g.zipf.Uint64())
	case g.S.cfg.Dist == "hotspot" && n >= 5:
		hot := n / 5
		if g.R.Float64() < 0.8 {
			return g.R.IntN(hot)
		}
		return hot + g.R.IntN(n-hot)
	}
	return g.R.IntN(n)
}

// Key draws a key; write counts towards key rotation.
func (g *Gen) Key(write bool) int64 { return g.S.key(g.Slot(), write) }

// Read reports whether the next choice is a read.
func (g *Gen) Read() bool { return g.R.Float64() < g.S.cfg.ReadRatio }

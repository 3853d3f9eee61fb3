// Package record runs a workload against a database and records the
// history: every micro-op with client invoke/complete times on one
// monotonic clock, session order, transaction outcomes (committed, aborted,
// unknown — never dropped), and whatever ordering evidence the database
// offers (PostgreSQL xids, snapshots and exact commit order from logical
// decoding; MariaDB GTIDs). The history is written incrementally as native
// JSON Lines (history/jsonl) and returned in memory for checking.
//
// Only this package and its subpackages talk to databases; the checking
// core never does. docs/recorder.md documents the evidence per adapter.
package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// Config configures a run.
type Config struct {
	// DB is the database URL ("" = embedded SQLite on a temporary file).
	DB string
	// Level is the isolation level (db.ParseLevel names).
	Level string
	// Workload is the workload name (workload.Names).
	Workload string
	// WL is the workload shape.
	WL workload.Config
	// Clients is the number of concurrent client sessions (default 4).
	Clients int
	// Txns is the number of transactions to run (attempts: committed,
	// aborted and unknown all count). Ignored when Duration is set.
	Txns int
	// Duration, if > 0, runs for that long instead of Txns transactions,
	// counted from when every client has connected (Stats.Elapsed from
	// the same moment).
	Duration time.Duration
	// Seed seeds every client's random stream.
	Seed uint64
	// Out is the directory for history.jsonl (and evidence.jsonl); "" keeps
	// the history in memory only.
	Out string
	// DefaultDeletes lets the database decide WL.Deletes for the predicate
	// workload (txray run without --deletes): on where every predicate
	// read gets a version set, so emme tells an unborn row from a deleted
	// one and its verdicts stay definite (PostgreSQL at repeatable read
	// and serializable: snapshots; MariaDB at repeatable read with the
	// binary log on: snapshot markers and GTID commit positions), off
	// elsewhere. Without the certificate capture it stays off.
	DefaultDeletes bool
	// NoRecord runs the workload without recording anything (no history,
	// no evidence queries, no commit stream): the overhead baseline.
	NoRecord bool
	// CommitPoll is how often the commit stream (PostgreSQL's logical
	// decoding slot) is read during the run; 0 means DefaultCommitPoll.
	// Committed writers wait in memory for their commit positions before
	// they are written to the history file, so polling is what keeps the
	// file growing during the run (a killed recorder leaves a readable
	// history). A negative value reads the slot once, after the workload:
	// the server then decodes the run's WAL after the workload instead of
	// beside it on the same cores (the same total work, measured separately
	// in docs/benchmarks.md), at the price of writing the history file only
	// then and of the slot retaining the run's WAL until then.
	CommitPoll time.Duration
	// MaxRetries is how many times an aborted transaction's plan is
	// retried (each retry is a new transaction with fresh values).
	MaxRetries int
	// TxnTimeout bounds one transaction on the client side (default 30s);
	// hitting it during COMMIT makes the outcome unknown.
	TxnTimeout time.Duration
	// ConnectTimeout and StatementTimeout bound establishing a session and
	// each statement (db.Options; 0 = db.DefaultConnectTimeout,
	// db.DefaultStatementTimeout), so an unresponsive server ends the run
	// with an error or makes transactions unknown instead of hanging it.
	ConnectTimeout, StatementTimeout time.Duration

	// wrapHistory, if set, wraps the history file's writer (tests inject
	// write failures with it).
	wrapHistory func(io.Writer) io.Writer
	// afterLock, if set, is called once the run holds the database's run
	// lock (Exclusive), and onStart just before the clients start (after
	// setup and after every client has connected, before the run's clock
	// and Duration start): tests synchronise with the run through them
	// instead of guessing with sleeps.
	afterLock, onStart func()
	// clientConn, if set, is called with each client's connection after it
	// connects (open true; the first sessions before onStart, a session
	// replacing a lost one during the run) and before it closes (open
	// false): benchmarks read the server backend's CPU time through it.
	clientConn func(c db.Conn, open bool)
	// chainsWithCommitOrder keeps the replaced-version capture
	// (workload.Config.CommitOrder off) when a commit stream gives the
	// version order: tests compare the two orders on the same run.
	chainsWithCommitOrder bool
	// noSnapshots (benchmarks) keeps the certificate capture but takes no
	// snapshot markers (BenchmarkMariaDBCertificateOverhead/markers).
	noSnapshots bool
	// legacyEvidence runs PostgreSQL's earlier per-transaction evidence
	// query too (db CaptureLegacyEvidence) and keeps each transaction's
	// evidence in recorder.legacyEv; afterFinish, if set, is called with
	// the recorder at the end of finish. Differential tests compare the
	// two captures on the same run through them.
	legacyEvidence bool
	afterFinish    func(r *recorder)
	// commitStream, if set, is called with the commit stream after it is
	// created (open true) and before it is closed (open false):
	// benchmarks read its server backend's CPU time through it.
	commitStream func(s db.CommitStream, open bool)
	// Warn receives each limitation once (e.g. no logical decoding).
	Warn func(string)
	// Progress, if set, is called about every 200ms and at the end.
	Progress func(Stats)
	// SQLTrace, if set, receives the SQL trace of the clients (db.TraceSQL).
	SQLTrace io.Writer
}

// Stats counts a run's transactions.
type Stats struct {
	Txns      int64 `json:"txns"`
	Committed int64 `json:"committed"`
	Aborted   int64 `json:"aborted"`
	Unknown   int64 `json:"unknown"`
	// Serialization, Deadlock, LockTimeout, Connection and Other count aborts and
	// unknowns by cause.
	Serialization int64 `json:"serialization_failures"`
	Deadlock      int64 `json:"deadlocks"`
	LockTimeout   int64 `json:"lock_timeouts"`
	Connection    int64 `json:"connection_errors"`
	Other         int64 `json:"other_errors"`
	// UserAborts counts transactions the workload rolled back on purpose.
	UserAborts int64         `json:"user_aborts"`
	Elapsed    time.Duration `json:"elapsed_ns"`
}

// Result is a finished run.
type Result struct {
	// History is the recorded history (nil with NoRecord).
	History *history.History
	Stats   Stats
	// Path and EvidencePath are the files written ("" if none).
	Path, EvidencePath string
	// Certificate says how the predicate reads' version sets were
	// obtained (record/certificate.go).
	Certificate CertStats
}

// CertStats counts the version sets of predicate reads of committed
// transactions: derived from snapshots or read by shadow transactions
// (VersionSets), left to the checker (Skipped); and, with
// workload.Config.ShadowVersionSets, how many derived sets were compared
// with the shadow transaction's, how many differed (Example names the
// first), and how many reads took the shadow's set because none could be
// derived.
type CertStats struct {
	VersionSets, Skipped                         int
	ShadowCompared, ShadowMismatched, ShadowUsed int
	Example                                      string
	// Time is how long deriving the certificate took at the end of the
	// run (version order and version sets, not writing them).
	Time time.Duration
}

type counters struct {
	txns, committed, aborted, unknown      atomic.Int64
	serial, deadlock, connection, otherErr atomic.Int64
	lockTimeout                            atomic.Int64
	userAbort                              atomic.Int64
}

func (c *counters) snapshot(el time.Duration) Stats {
	return Stats{Txns: c.txns.Load(), Committed: c.committed.Load(), Aborted: c.aborted.Load(),
		Unknown: c.unknown.Load(), Serialization: c.serial.Load(), Deadlock: c.deadlock.Load(), LockTimeout: c.lockTimeout.Load(),
		Connection: c.connection.Load(), Other: c.otherErr.Load(), UserAborts: c.userAbort.Load(), Elapsed: el}
}

// rawTxn is a completed transaction as a client hands it to the recorder.
type rawTxn struct {
	session string
	seq     int
	status  history.Status
	inv     int64
	cmp     int64
	ops     []workload.Op
	ev      db.TxnEvidence
}

// Run executes cfg and returns the recorded history. Errors are for setup,
// I/O and broken data; transaction failures are outcomes in the history.
// No error or warning shows a secret of cfg.DB (db.Scrub).
//
// A failure to write the history file stops the run at once: no new
// transaction starts, those in flight finish, and Run returns a *WriteError
// with the Result (Path set, History nil). The file then holds the header
// and a prefix of the transactions, every line but possibly the last
// complete (history readers accept a torn last line with a notice).
func Run(ctx context.Context, cfg Config) (*Result, error) {
	res, err := run(ctx, cfg)
	return res, db.ScrubError(err, cfg.DB)
}

func run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = 4
	}
	if cfg.Txns <= 0 && cfg.Duration <= 0 {
		cfg.Txns = 1000
	}
	if cfg.TxnTimeout <= 0 {
		cfg.TxnTimeout = 30 * time.Second
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = db.DefaultConnectTimeout
	}
	if cfg.StatementTimeout <= 0 {
		cfg.StatementTimeout = db.DefaultStatementTimeout
	}
	if cfg.Workload == "" {
		cfg.Workload = "list-append"
	}
	warned := map[string]bool{}
	var warnMu sync.Mutex
	warn := func(s string) {
		warnMu.Lock()
		defer warnMu.Unlock()
		if !warned[s] && cfg.Warn != nil {
			cfg.Warn(db.Scrub(s, cfg.DB))
		}
		warned[s] = true
	}
	level, err := db.ParseLevel(cfg.Level)
	if err != nil {
		return nil, err
	}
	d, err := db.Open(ctx, cfg.DB, db.Options{Level: level, Record: !cfg.NoRecord, Warn: warn,
		ConnectTimeout: cfg.ConnectTimeout, StatementTimeout: cfg.StatementTimeout})
	if err != nil {
		return nil, err
	}
	wl, err := workload.New(cfg.Workload, d)
	if err != nil {
		d.Close()
		return nil, err
	}
	if cfg.DefaultDeletes && cfg.Workload == "predicate" && !cfg.WL.NoCertificate {
		cfg.WL.Deletes = deletesDecidable(d, cfg.NoRecord)
	}
	if d.Name() == "postgres" && (d.Level() == db.RepeatableRead || d.Level() == db.Serializable) && !cfg.WL.NoCertificate && !cfg.NoRecord {
		// the recorder reads the transaction's snapshot (rec.txnSnap
		// below), every statement's snapshot at these levels
		if pr, ok := wl.(workload.PredicateReader); ok && pr.PredicateReads() {
			if _, ok := d.(interface{ CaptureTxnSnapshot() }); ok {
				cfg.WL.TxnSnapshot = true
			}
		}
	}
	shared, err := workload.NewShared(cfg.WL)
	if err != nil {
		d.Close()
		return nil, err
	}
	if pr, ok := wl.(workload.PredicateReader); ok && pr.PredicateReads() && !cfg.NoRecord && !cfg.WL.NoCertificate && !cfg.noSnapshots {
		// version sets of predicate reads need each read view (MariaDB
		// REPEATABLE READ: snapshot markers, record/db/mysnap.go)
		if s, ok := d.(interface{ CaptureSnapshots() }); ok {
			s.CaptureSnapshots()
		}
	}
	raw := d // the adapter itself, for its optional methods
	if cfg.SQLTrace != nil {
		d = db.TraceSQL(d, cfg.SQLTrace)
	}
	defer d.Close()
	if err := d.Exclusive(ctx, func() {
		warn("another txray run is using this database (its tables have fixed names); waiting for it to finish")
	}); err != nil {
		return nil, err
	}
	if cfg.afterLock != nil {
		cfg.afterLock()
	}
	version, err := d.Version(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: SELECT version(): %v", d.Name(), err)
	}
	if err := d.Setup(ctx, wl.Setup(d, shared.Config())...); err != nil {
		return nil, err
	}
	rec := &recorder{cfg: &cfg, warn: warn}
	rec.txnSnap = d.Name() == "postgres" && (d.Level() == db.RepeatableRead || d.Level() == db.Serializable) && !cfg.WL.NoCertificate
	if pr, ok := wl.(workload.PredicateReader); !ok || !pr.PredicateReads() {
		rec.txnSnap = false
	} else {
		rec.predReads = true
	}
	if le, ok := raw.(interface{ CaptureLegacyEvidence() }); ok && cfg.legacyEvidence {
		le.CaptureLegacyEvidence()
		rec.legacyEv = map[int32]db.TxnEvidence{}
	}
	if ts, ok := raw.(interface{ CaptureTxnSnapshot() }); ok && rec.txnSnap && !cfg.NoRecord {
		// The transaction's snapshot is read only where version sets
		// use it (keepSnapshots).
		ts.CaptureTxnSnapshot()
	}
	res := &Result{}
	if !cfg.NoRecord {
		h := history.New()
		wc := shared.Config()
		h.Header = history.Header{Format: "jsonl", DB: d.Name(), Version: version, Level: d.Level(),
			Workload: wl.Name(), Clock: "monotonic ns since run start (client)",
			Extra: map[string]string{
				"clients": strconv.Itoa(cfg.Clients), "keys": strconv.Itoa(wc.Keys), "ops": strconv.Itoa(wc.Ops),
				"read_ratio": strconv.FormatFloat(wc.ReadRatio, 'g', -1, 64), "dist": wc.Dist,
				"max_writes_per_key": strconv.Itoa(wc.MaxWritesPerKey), "seed": strconv.FormatUint(cfg.Seed, 10),
				"requested_level": level, "recorder": "txray run"}}
		if cfg.WL.Deletes {
			h.Header.Extra["deletes"] = "true"
		}
		if st, ok := d.(interface{ Settings() map[string]string }); ok {
			for k, v := range st.Settings() {
				h.Header.Extra[k] = v
			}
		}
		h.Evidence = history.Evidence{Sessions: true, ClientTime: true, OpTime: true}
		if pr, ok := wl.(workload.PredicateReader); ok && pr.PredicateReads() {
			h.Evidence.PredicateRead = true
		}
		if td, ok := wl.(workload.TableDecls); ok {
			h.Header.Tables = td.Tables()
		}
		rec.h = h
		stream, why, err := d.CommitStream(ctx)
		if err != nil {
			return nil, err
		}
		if stream != nil {
			rec.stream = stream
			if cfg.commitStream != nil {
				cfg.commitStream(stream, true)
			}
			defer func() {
				if cfg.commitStream != nil {
					cfg.commitStream(stream, false)
				}
				// Bounded: a server gone silent must not hang the end of
				// the run (the slot is temporary and dies with the session).
				cctx, cancel := context.WithTimeout(context.Background(), cfg.StatementTimeout)
				defer cancel()
				_ = stream.Close(cctx)
			}()
			h.Evidence.CommitOrder = true
			h.Header.Extra["commit_ts"] = "commit LSN from a logical decoding slot (test_decoding): exact WAL commit order"
			if c, ok := stream.(interface{ Capture() string }); ok {
				// which capture the stream is (db.CommitStream)
				h.Header.Extra["commit_ts"] = c.Capture()
			}
			if !cfg.chainsWithCommitOrder {
				// the version order comes from the commit order
				// (certify): writes need not return what they replaced
				shared.SetCommitOrder(true)
			}
		} else if g, ok := d.(interface{ HasCommitOrder() bool }); ok && g.HasCommitOrder() {
			h.Evidence.CommitOrder = true
			h.Header.Extra["commit_ts"] = "MariaDB @@last_gtid sequence number read after COMMIT (binlog order)"
			if d.Name() == "sqlite" {
				h.Header.Extra["commit_ts"] = "counter taken by each writer just before COMMIT under SQLite's database write lock (exact commit order of writers)"
			}
		} else if why != "" && d.Name() == "postgres" {
			warn(why)
		}
		h.Evidence.SerialOrder = serialOrderFor(d.Name(), d.Level(), h.Evidence.CommitOrder)
		if cfg.Out != "" {
			if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
				return nil, err
			}
			res.Path = filepath.Join(cfg.Out, "history.jsonl")
			f, err := os.Create(res.Path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			var hw io.Writer = f
			if cfg.wrapHistory != nil {
				hw = cfg.wrapHistory(f)
			}
			rec.f, rec.w = f, jsonl.NewWriter(hw)
			if d.Name() == "postgres" || h.Evidence.CommitOrder {
				res.EvidencePath = filepath.Join(cfg.Out, "evidence.jsonl")
				ef, err := os.Create(res.EvidencePath)
				if err != nil {
					return nil, err
				}
				defer ef.Close()
				rec.ef = ef
				h.Header.Extra["evidence_file"] = "evidence.jsonl"
			}
			err = rec.w.WriteHeader(h.Header, h.Evidence)
			if err == nil {
				err = rec.w.Flush()
			}
			if err != nil {
				return res, &WriteError{Path: res.Path, Err: err}
			}
		}
	}

	// Cancelling ctx (SIGINT) stops issuing transactions; those in flight
	// finish on work, which is not cancelled (each is bounded by
	// TxnTimeout), and the recorder drains the commit stream on it, so an
	// interrupted run still ends with a complete, checkable history.
	work := context.WithoutCancel(ctx)
	// Every client connects before the clock starts, so a Duration is the
	// workload's time, not the connections' (on a loaded machine, or a
	// distant server, connecting took a whole 1-s benchmark run once), and
	// the first transactions do not wait behind other clients' handshakes.
	conns, err := connectClients(work, &cfg, d)
	if err != nil {
		// Nothing ran; the history file (res.Path) holds the header.
		return res, err
	}
	defer closeClients(&cfg, conns)
	if cfg.onStart != nil {
		cfg.onStart()
	}
	var cnt counters
	start := time.Now()
	clock := func() int64 { return int64(time.Since(start)) }
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if cfg.Duration > 0 {
		runCtx, cancel = context.WithTimeout(runCtx, cfg.Duration)
		defer cancel()
	}
	var issued atomic.Int64
	claim := func() bool {
		if runCtx.Err() != nil {
			return false
		}
		if cfg.Duration > 0 {
			return true
		}
		return issued.Add(1) <= int64(cfg.Txns)
	}

	q := newTxnQueue(cfg.Clients)
	recErr := make(chan error, 1)
	// A write failure stops issuing transactions at once (see Run).
	rec.stop = cancel
	if !cfg.NoRecord {
		go func() { recErr <- rec.loop(work, q) }()
	}
	stopProgress := make(chan struct{})
	var progWG sync.WaitGroup
	if cfg.Progress != nil {
		progWG.Add(1)
		go func() {
			defer progWG.Done()
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stopProgress:
					return
				case <-t.C:
					cfg.Progress(cnt.snapshot(time.Since(start)))
				}
			}
		}()
	}

	var wg sync.WaitGroup
	var fatalOnce sync.Once
	var fatal error
	for id := 0; id < cfg.Clients; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			err := runClient(work, runCtx, &cfg, d, &conns[id], wl, shared, id, clock, claim, &cnt, q)
			if err != nil {
				fatalOnce.Do(func() { fatal = err; cancel() })
			}
		}(id)
	}
	wg.Wait()
	elapsed := time.Since(start)
	closeClients(&cfg, conns)
	close(stopProgress)
	progWG.Wait()
	if !cfg.NoRecord {
		q.close()
		if err := <-recErr; err != nil && fatal == nil {
			fatal = err
		}
	}
	res.Stats = cnt.snapshot(elapsed)
	if cfg.Progress != nil {
		cfg.Progress(res.Stats)
	}
	if rec.werr != nil {
		// The write failure is the cause; errors after it are effects.
		fatal = &WriteError{Path: res.Path, Err: rec.werr, Txns: res.Stats.Txns, Written: rec.written}
	}
	if fatal != nil {
		return res, fatal
	}
	res.History = rec.h
	res.Certificate = rec.certStats
	return res, nil
}

// WriteError is a failure to write the history file: the run stopped at
// once (see Run).
type WriteError struct {
	Path string
	Err  error
	// Txns is how many transactions ran; Written how many were handed to
	// the file before the failure (the last of them may be torn).
	Txns, Written int64
}

func (e *WriteError) Error() string {
	if e.Txns == 0 && e.Written == 0 {
		return fmt.Sprintf("writing the history %s failed: %v; the run did not start", e.Path, e.Err)
	}
	return fmt.Sprintf("writing the history %s failed: %v; the run stopped after %d transactions (those in flight finished); "+
		"the file holds the header and at most the first %d of them (its last line may be torn: txray check reads up to it)",
		e.Path, e.Err, e.Txns, e.Written)
}

func (e *WriteError) Unwrap() error { return e.Err }

// connectClients opens one session per client, all at once, and hands
// each to cfg.clientConn. If one fails, those opened are closed and the
// error names the client.
func connectClients(ctx context.Context, cfg *Config, d db.DB) ([]db.Conn, error) {
	conns := make([]db.Conn, cfg.Clients)
	errs := make([]error, cfg.Clients)
	var wg sync.WaitGroup
	for id := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conns[id], errs[id] = d.Conn(ctx)
		}()
	}
	wg.Wait()
	for id, err := range errs {
		if err != nil {
			for _, c := range conns {
				if c != nil {
					c.Close()
				}
			}
			return nil, fmt.Errorf("client %d: connect: %v", id, err)
		}
	}
	if cfg.clientConn != nil {
		for _, c := range conns {
			cfg.clientConn(c, true)
		}
	}
	return conns, nil
}

// closeClients closes the clients' sessions still open (a client that
// lost its session and could not reconnect leaves nil) and clears conns;
// calling it again does nothing.
func closeClients(cfg *Config, conns []db.Conn) {
	for i, c := range conns {
		if c == nil {
			continue
		}
		if cfg.clientConn != nil {
			cfg.clientConn(c, false)
		}
		c.Close()
		conns[i] = nil
	}
}

// runClient is one client's loop: plan, BEGIN, execute, COMMIT, classify,
// hand the attempt to the recorder, retry aborted plans as new
// transactions. It claims transactions while runCtx lasts; ctx (never
// cancelled by Run's caller) carries the transactions themselves. *connp
// is the client's session, opened by connectClients; after a lost session
// runClient replaces it with a new one (nil if none could be opened), and
// Run closes it.
func runClient(ctx, runCtx context.Context, cfg *Config, d db.DB, connp *db.Conn, wl workload.Workload, shared *workload.Shared,
	id int, clock func() int64, claim func() bool, cnt *counters, q *txnQueue) error {
	g := workload.NewGen(shared, cfg.Seed, id)
	if cfg.WL.ShadowVersionSets && d.Name() == "postgres" {
		var shadow db.Conn
		defer func() {
			if shadow != nil {
				shadow.Close()
			}
		}()
		g.Shadow = func(ctx context.Context) (db.Conn, error) {
			if shadow == nil {
				c, err := d.Conn(ctx)
				if err != nil {
					return nil, err
				}
				shadow = c
			}
			return shadow, nil
		}
	}
	conn := *connp
	incarnation, seq := 0, 0
	session := "c" + strconv.Itoa(id)
	rec := workload.Recorder{Clock: clock}
	plan := wl.Plan(g)
	retries := 0
	for claim() {
		rec.Reset()
		tctx, cancel := context.WithTimeout(ctx, cfg.TxnTimeout)
		if tt, ok := conn.(db.TxnTracer); ok {
			tt.TraceTxn(session + "-" + strconv.Itoa(seq)) // the history id (see add)
		}
		inv := clock()
		err := conn.Begin(tctx)
		if err == nil {
			err = wl.Exec(tctx, conn, g, &plan, &rec)
		}
		atCommit := false
		if err == nil {
			atCommit = true
			err = conn.Commit(tctx)
		}
		cmp := clock()
		cancel()
		status := history.Committed
		var class db.Class
		if err != nil {
			if errors.Is(err, workload.ErrBadData) {
				return fmt.Errorf("client %d: %v", id, err)
			}
			var outcome db.Outcome
			if errors.Is(err, workload.ErrUserAbort) {
				outcome, class = db.Aborted, db.ClassOther
			} else {
				outcome, class = conn.Classify(err, atCommit)
			}
			status = history.Aborted
			if outcome == db.Unknown {
				status = history.Unknown
			}
			switch {
			case errors.Is(err, workload.ErrUserAbort):
				cnt.userAbort.Add(1)
			case class == db.ClassSerialization:
				cnt.serial.Add(1)
			case class == db.ClassDeadlock:
				cnt.deadlock.Add(1)
			case class == db.ClassLockTimeout:
				cnt.lockTimeout.Add(1)
			case class == db.ClassConnection:
				cnt.connection.Add(1)
			default:
				cnt.otherErr.Add(1)
			}
			if class != db.ClassConnection {
				rctx, rc := context.WithTimeout(ctx, cfg.TxnTimeout)
				if rerr := conn.Rollback(rctx); rerr != nil {
					class = db.ClassConnection
				}
				rc()
			}
		}
		cnt.txns.Add(1)
		switch status {
		case history.Committed:
			cnt.committed.Add(1)
		case history.Aborted:
			cnt.aborted.Add(1)
		default:
			cnt.unknown.Add(1)
		}
		if !cfg.NoRecord {
			raw := rawPool.Get().(*rawTxn)
			*raw = rawTxn{session: session, seq: seq, status: status, inv: inv, cmp: cmp,
				ops: append(raw.ops[:0], rec.Ops...), ev: conn.Evidence()}
			q.push(raw)
		}
		seq++
		if err != nil && class == db.ClassConnection {
			// The session is gone. A transaction with unknown outcome may
			// still be running, so later transactions belong to a new
			// session (as Jepsen retires a process after :info).
			if cfg.clientConn != nil {
				cfg.clientConn(conn, false)
			}
			conn.Close()
			*connp = nil
			conn, err = reconnect(ctx, runCtx, d)
			if err != nil {
				if runCtx.Err() != nil {
					return nil
				}
				return fmt.Errorf("client %d: reconnect: %v", id, err)
			}
			*connp = conn
			if cfg.clientConn != nil {
				cfg.clientConn(conn, true)
			}
			incarnation++
			session = "c" + strconv.Itoa(id) + "." + strconv.Itoa(incarnation)
			seq = 0
		}
		if status == history.Aborted && retries < cfg.MaxRetries && !errors.Is(err, workload.ErrUserAbort) {
			retries++
			continue
		}
		retries = 0
		plan = wl.Plan(g)
	}
	return nil
}

func reconnect(ctx, runCtx context.Context, d db.DB) (db.Conn, error) {
	var last error
	for i := 0; i < 10; i++ {
		c, err := d.Conn(ctx)
		if err == nil {
			return c, nil
		}
		last = err
		select {
		case <-runCtx.Done():
			return nil, runCtx.Err()
		case <-time.After(time.Duration(100*(i+1)) * time.Millisecond):
		}
	}
	return nil, last
}

// recorder is the single goroutine that interns completed transactions
// into the history and writes them, holding committed PostgreSQL
// transactions until the commit stream has given their commit position.
type recorder struct {
	cfg    *Config
	h      *history.History
	w      *jsonl.Writer
	f      *os.File
	ef     *os.File
	stream db.CommitStream
	warn   func(string)

	pending []pend
	commits map[uint32]db.CommitRecord
	// late is a read of the commit stream that finished after the recorder
	// stopped taking them (see poller); finish takes it first.
	late   []polled
	chains chains // replaced versions reported by writes (certificate.go)
	// xids are the PostgreSQL xids of transactions (by index), snaps the
	// snapshots of predicate reads (certificate.go); txnSnap: predicate
	// reads without a snapshot of their own read under the transaction's
	// (repeatable read and serializable).
	xids    map[int32]uint64
	snaps   []predSnap
	txnSnap bool
	// predReads: the workload has predicate reads, so writers' xids are
	// kept in xids for their version sets (keepSnapshots).
	predReads bool
	// marks: MariaDB snapshot markers and commit positions (mysnapvs.go)
	marks  *markState
	shadow shadowStats
	// legacyEv: every transaction's evidence, legacy the xids and
	// snapshots keepSnapshots keeps from the earlier capture
	// (Config.legacyEvidence).
	legacyEv map[int32]db.TxnEvidence
	legacy   struct {
		xids  map[int32]uint64
		snaps []predSnap
	}
	// certStats is what certify did (Result.Certificate).
	certStats CertStats
	evBuf     []byte
	slab      txnSlab

	// stop cancels the run (no new transactions) on a write failure.
	stop func()
	// werr is the first history write failure; after it nothing more is
	// written. written counts transactions handed to the writer before.
	werr    error
	written int64
	// wakes counts the times loop took the queue (tests: an idle
	// recorder must not wake more often than queueTick).
	wakes int
}

// DefaultCommitPoll is Config.CommitPoll's default: the commit stream is
// read every 2 s during the run. PostgreSQL's WAL stream (db.CommitStream)
// reads only the WAL written since the last read, so the period bounds
// how far the history file trails the run more than it costs; the
// logical slot it falls back to costs more the more often it is read:
// each read of a PostgreSQL slot decodes
// again from the slot's restart point, which the server moves only at
// its periodic running-transactions records (every 15 s, and at
// checkpoints), so a read costs the server the WAL since then, not since
// the last read: in 20-s runs, reads every 500 ms cost the slot's backend
// 50 µs per transaction, every 2 s 13.4 µs, once at the end 13.0 µs
// (docs/benchmarks.md, "Item 5, fourth pass").
const DefaultCommitPoll = 2 * time.Second

type pend struct {
	idx  int32
	xid  uint64
	snap string
}

func (r *recorder) loop(ctx context.Context, q *txnQueue) error {
	if r.stream != nil {
		r.commits = map[uint32]db.CommitRecord{}
	}
	poll := r.cfg.CommitPoll
	if poll == 0 {
		poll = DefaultCommitPoll
	}
	// The commit stream is read on its own goroutine: a read takes
	// milliseconds to tens of milliseconds of server work, and while the
	// recorder waited for it the clients, blocked on a full queue, waited
	// too.
	var polled <-chan polled
	stopPoll := func() {}
	if r.stream != nil && poll > 0 {
		polled, stopPoll = r.poller(ctx, poll)
	}
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	tick := time.NewTicker(queueTick)
	defer tick.Stop()
	for {
		ticked := false
		select {
		case <-q.wake:
		case <-tick.C:
			ticked = true
		case p := <-polled:
			r.takeCommits(p.recs, p.err)
			keep(r.drain(false))
			continue
		}
		r.wakes++
		batch, closed := q.take()
		for _, raw := range batch {
			keep(r.add(raw))
			raw.ops = raw.ops[:0]
			rawPool.Put(raw)
		}
		q.recycle(batch)
		if closed {
			stopPoll()
			keep(r.finish(ctx))
			return firstErr
		}
		if ticked {
			// the history file grows during the run: a killed recorder
			// leaves what was completed up to about 2 × queueTick ago
			// (PostgreSQL writers: up to the last commit stream read)
			r.flush()
		}
	}
}

// queueTick is how often the recorder takes what the clients completed
// when fewer than a batch are waiting (txnQueue), and flushes the history
// file. It was 10 ms: each tick wakes the recorder's goroutine, and a
// wake-up of an otherwise idle thread cost 120–150 µs of CPU on the
// loaded 2-core machine (a bare 10-ms ticker used 12 ms of CPU per second
// at load 20, a 100-ms one 2.5), which at the few hundred transactions per
// second of a loaded PostgreSQL benchmark was 10–25 µs per transaction,
// more than the recorder's own work (docs/benchmarks.md, "Item 5, fifth
// pass"). Busy runs fill a batch first and are woken by it.
const queueTick = 100 * time.Millisecond

// rawPool recycles rawTxns and their op slices between the clients and
// the recorder (add copies what it keeps).
var rawPool = sync.Pool{New: func() any { return new(rawTxn) }}

// txnQueue hands completed transactions from the clients to the recorder
// in the order they completed. It replaced a channel: a send per
// transaction woke the recorder's goroutine for each one, and that
// wake-up (often of an idle thread, through the scheduler and a futex)
// cost about as much as the recorder's own work in a CPU profile of the
// PostgreSQL overhead benchmark (docs/benchmarks.md, "Item 5, fourth
// pass"). Clients append under a mutex; the recorder takes everything
// waiting when a batch is full or every queueTick. A client waits while
// max transactions are queued, so memory stays bounded when the recorder
// falls behind (as the channel's capacity did). A batch is half of max
// (544 with 4 clients; it was 64 + 4 × clients): below about 5,000
// transactions per second the recorder then wakes only on its tick, and
// faster runs wake it every batch, with room for as many more before a
// client waits.
type txnQueue struct {
	mu         sync.Mutex
	room       *sync.Cond // signalled when the recorder takes the queue
	buf, spare []*rawTxn
	batch, max int
	closed     bool
	wake       chan struct{}
}

func newTxnQueue(clients int) *txnQueue {
	q := &txnQueue{max: 1024 + 16*clients, wake: make(chan struct{}, 1)}
	q.batch = q.max / 2
	q.room = sync.NewCond(&q.mu)
	return q
}

func (q *txnQueue) push(t *rawTxn) {
	q.mu.Lock()
	for len(q.buf) >= q.max && !q.closed {
		q.room.Wait()
	}
	q.buf = append(q.buf, t)
	n := len(q.buf)
	q.mu.Unlock()
	if n == q.batch {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// take returns every queued transaction, and whether the queue is closed
// (then nothing more comes).
func (q *txnQueue) take() ([]*rawTxn, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.buf
	q.buf, q.spare = q.spare[:0], nil
	q.room.Broadcast()
	return b, q.closed
}

// recycle gives take's slice back for reuse.
func (q *txnQueue) recycle(b []*rawTxn) {
	clear(b)
	q.mu.Lock()
	q.spare = b[:0]
	q.mu.Unlock()
}

// close ends the queue once every client has returned.
func (q *txnQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.room.Broadcast()
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// polled is one read of the commit stream.
type polled struct {
	recs []db.CommitRecord
	err  error
}

// poller reads the commit stream every period on its own goroutine until
// the returned stop is called (stop waits for a read in progress, so the
// stream is free for finish's last read). A failed read ends polling; the
// recorder turns the failure into a warning.
func (r *recorder) poller(ctx context.Context, period time.Duration) (<-chan polled, func()) {
	out := make(chan polled)
	done := make(chan struct{})
	stream := r.stream // the recorder clears r.stream only after a failed read, which ends this goroutine
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			pctx, cancel := context.WithTimeout(ctx, r.cfg.StatementTimeout)
			recs, err := stream.Poll(pctx)
			cancel()
			select {
			case out <- polled{recs, err}:
			case <-done:
				// The recorder stopped taking reads (the workload is
				// over); the slot has consumed these commits, so they
				// are kept for finish.
				r.late = append(r.late, polled{recs, err})
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return out, func() { close(done); wg.Wait() }
}

// grow is how many more transactions History.Txns gets room for when the
// n it holds fill it, the last completed at clock time now (ns since the
// run's start). At least doubling: append grows a large slice by about
// 1.25×, which allocated five times the final array over a run (46 % of
// the recorder's allocated bytes, docs/benchmarks.md "Item 5, fourth
// pass"). A run of Txns transactions gets room for all of them at the
// first growth (at most 1<<20 at a time); a run of a Duration, for what
// its rate so far predicts plus a tenth, so that it copies the array once
// or twice instead of at every doubling.
func (r *recorder) grow(n int, now int64) int {
	more := max(n, 256)
	switch c := r.cfg; {
	case c.Duration <= 0 && c.Txns > n:
		more = max(more, min(c.Txns-n, 1<<20))
	case c.Duration > 0 && now >= int64(20*time.Millisecond) && n >= 256:
		total := float64(n) * float64(c.Duration) / float64(now) * 1.1
		more = max(more, min(int(total)-n, 1<<20))
	}
	return more
}

// txnSlab carves the recorder's per-transaction arrays (ops, op times and
// their TxnExt) from shared chunks: one allocation per few hundred
// transactions instead of three per transaction. Each piece is a full
// slice expression (capacity = length), so appending to one (forgetReads
// filters in place; nothing appends past the end) reallocates instead of
// running into its neighbour.
type txnSlab struct {
	opBuf   []history.Op
	timeBuf []history.OpTime
	extBuf  []history.TxnExt
	// idBuf: the current chunk of transaction ids (id)
	idBuf []byte
}

// slabLen is how many ops (and op times) a chunk holds; exts get a
// quarter as many (four ops per transaction is the default).
const slabLen = 1024

func (s *txnSlab) ops(n int) []history.Op {
	if n > len(s.opBuf) {
		if n > slabLen/4 {
			return make([]history.Op, n)
		}
		s.opBuf = make([]history.Op, slabLen)
	}
	o := s.opBuf[:n:n]
	s.opBuf = s.opBuf[n:]
	return o
}

// idChunk is the size of the chunks transaction ids are carved from.
const idChunk = 4096

// id is session + "-" + seq (the transaction's history id), carved from a
// shared chunk instead of two allocations per transaction (strconv.Itoa
// and the concatenation). The chunk's bytes are only ever appended to,
// never changed once a string covers them, so the string stays immutable
// (unsafe.String's contract); the chunk lives as long as any id in it.
func (s *txnSlab) id(session string, seq int) string {
	need := len(session) + 1 + 20 // '-' and the longest int
	if need > idChunk/8 {
		return session + "-" + strconv.Itoa(seq)
	}
	if cap(s.idBuf)-len(s.idBuf) < need {
		s.idBuf = make([]byte, 0, idChunk)
	}
	start := len(s.idBuf)
	s.idBuf = strconv.AppendInt(append(append(s.idBuf, session...), '-'), int64(seq), 10)
	return unsafe.String(&s.idBuf[start], len(s.idBuf)-start)
}

// ext is a TxnExt with n zeroed op times.
func (s *txnSlab) ext(n int) *history.TxnExt {
	if len(s.extBuf) == 0 {
		s.extBuf = make([]history.TxnExt, slabLen/4)
	}
	x := &s.extBuf[0]
	s.extBuf = s.extBuf[1:]
	if n > len(s.timeBuf) {
		if n > slabLen/4 {
			x.OpTimes = make([]history.OpTime, n)
			return x
		}
		s.timeBuf = make([]history.OpTime, slabLen)
	}
	x.OpTimes = s.timeBuf[:n:n]
	s.timeBuf = s.timeBuf[n:]
	return x
}

func (r *recorder) add(raw *rawTxn) error {
	h := r.h
	t := history.Txn{Session: h.Sessions.Str(raw.session), Seq: int32(raw.seq), Status: raw.status,
		HasTime: true, Invoke: raw.inv, Complete: raw.cmp,
		ID: r.slab.id(raw.session, raw.seq), Ops: r.slab.ops(len(raw.ops))}
	w := writes(raw.ops)
	if raw.ev.CommitTS.Set && raw.status == history.Committed && w {
		// Only writers get a binlog event: after a read-only commit
		// @@last_gtid still names the session's previous commit.
		t.CommitTS = raw.ev.CommitTS
	}
	if !w {
		raw.ev.GTID = ""
	}
	for i := range raw.ops {
		if raw.ops[i].Done {
			// the op times in full (SetOpTime grows them otherwise)
			t.Ext = r.slab.ext(len(raw.ops))
			break
		}
	}
	for i := range raw.ops {
		convertOp(h, &raw.ops[i], &t, i)
	}
	r.chainVersions(raw.status, raw.ops, t.Ops)
	if len(h.Txns) == cap(h.Txns) {
		h.Txns = slices.Grow(h.Txns, r.grow(len(h.Txns), raw.cmp))
	}
	p := h.Add(t)
	r.keepSnapshots(p.Index, raw)
	r.keepMarks(p.Index, raw)
	if r.legacyEv != nil {
		r.keepLegacy(p.Index, raw)
	}
	if r.stream != nil && raw.ev.XID == 0 && raw.status == history.Committed && w && writesDone(raw.ops) {
		// The adapter reads the xid from the first write that changed a
		// row; a committed writer without one cannot be placed in the
		// commit order.
		r.warn("some committed writers have no xid (their writes were not annotated); the history has no exact commit order")
		r.h.Evidence.CommitOrder = false
	}
	if r.stream != nil && raw.ev.XID != 0 && raw.status != history.Aborted && w {
		// Logical decoding emits only transactions that changed data, so
		// only writers wait for their commit position.
		r.pending = append(r.pending, pend{idx: p.Index, xid: raw.ev.XID, snap: raw.ev.Snapshot})
		return r.drain(false)
	}
	if p.Status == history.Unknown {
		r.forgetReads(p)
	}
	if err := r.evidence(p, raw.ev.XID, raw.ev.Snapshot, raw.ev.GTID, nil, false); err != nil {
		return err
	}
	if len(r.pending) > 0 {
		r.pending = append(r.pending, pend{idx: p.Index})
		return nil
	}
	return r.write(p)
}

// forgetReads makes the read results of a transaction whose outcome is
// unknown unknown, as Jepsen records an :info completion: the transaction
// may have aborted, and an uncommitted transaction's reads carry no
// isolation guarantee (PostgreSQL, for one, only guarantees serializable
// reads for committed transactions), so a checker must not build
// dependencies on them. Its writes stay: they may have taken effect.
// Predicate reads have no unknown-result form and are removed, counted in
// History.Ignored.
func (r *recorder) forgetReads(t *history.Txn) {
	ops := t.Ops[:0]
	var times []history.OpTime
	for j, o := range t.Ops {
		switch o.Kind {
		case history.Read:
			if o.IsList {
				o.SetListSpan(0, 0)
				o.ListUnknown = true
			} else {
				o.Value = history.NoValue
			}
		case history.PredRead:
			r.h.Ignore("predicate read in a transaction with unknown outcome (result not trusted)", 1)
			continue
		}
		if t.Ext != nil && j < len(t.Ext.OpTimes) {
			times = append(times, t.Ext.OpTimes[j])
		}
		ops = append(ops, o)
	}
	t.Ops, t.Lists = ops, nil
	if t.Ext != nil {
		t.Ext = &history.TxnExt{OpTimes: times}
	}
}

// writes reports whether ops include a write that may have reached the
// database.
func writes(ops []workload.Op) bool {
	for i := range ops {
		if k := ops[i].Kind; k == history.Write || k == history.Delete || k == history.Append || k == history.Increment {
			return true
		}
	}
	return false
}

// keepLegacy keeps t's evidence and what keepSnapshots keeps from the
// earlier capture's xid and snapshot, apart from the run's own
// (Config.legacyEvidence: differential tests).
func (r *recorder) keepLegacy(t int32, raw *rawTxn) {
	r.legacyEv[t] = raw.ev
	xids, snaps, ev := r.xids, r.snaps, raw.ev
	r.xids, r.snaps = r.legacy.xids, r.legacy.snaps
	raw.ev.XID, raw.ev.Snapshot = ev.LegacyXID, ev.LegacySnapshot
	r.keepSnapshots(t, raw)
	raw.ev = ev
	r.legacy.xids, r.legacy.snaps = r.xids, r.snaps
	r.xids, r.snaps = xids, snaps
}

// writesDone reports whether a completed write is among ops.
func writesDone(ops []workload.Op) bool {
	for i := range ops {
		if k := ops[i].Kind; ops[i].Done && (k == history.Write || k == history.Delete || k == history.Append || k == history.Increment) {
			return true
		}
	}
	return false
}

func convertOp(h *history.History, o *workload.Op, t *history.Txn, j int) {
	d := &t.Ops[j]
	d.Kind = o.Kind
	if o.KeyS != "" {
		d.Key = h.Keys.Str(o.KeyS)
	} else {
		d.Key = h.Keys.Int(o.Key)
	}
	d.Value = history.NoValue
	if o.Done {
		t.SetOpTime(j, o.Invoke, o.Complete)
	}
	switch o.Kind {
	case history.Read:
		if o.IsList {
			d.IsList = true
			if !o.Done {
				d.ListUnknown = true
				break
			}
			off := len(t.Lists)
			for _, v := range o.List {
				t.Lists = append(t.Lists, h.Values.Int(v))
			}
			d.SetListSpan(off, len(o.List))
		} else if o.Done && o.HasValue {
			d.Value = h.Values.Int(o.Value)
		}
	case history.PredRead:
		if o.Pred != nil {
			p := history.Predicate{Table: o.Pred.Table, Where: o.Pred.Where}
			for _, row := range o.Pred.Rows {
				r := history.Row{Value: history.NoValue}
				if row.KeyS != "" {
					r.Key = h.Keys.Str(row.KeyS)
				} else {
					r.Key = h.Keys.Int(row.Key)
				}
				if row.HasValue {
					r.Value = h.Values.Int(row.Value)
				}
				p.Result = append(p.Result, r)
			}
			t.SetPred(d, p)
		}
	default:
		if o.HasValue {
			d.Value = h.Values.Int(o.Value)
		}
		if o.Row != nil && o.Kind == history.Write && d.Value != history.NoValue {
			// Values are unique per run, so a version has one image; a
			// second, different one would be a workload bug.
			if err := h.SetRowImage(d.Key, d.Value, o.Row); err != nil {
				h.Notes = append(h.Notes, "recorder: "+err.Error()+" (the first is kept)")
				h.Notices = append(h.Notices, "recorder: "+err.Error()+" (the first is kept)")
			}
		}
	}
}

// evidence appends an evidence.jsonl record for t: its xid and snapshot
// (PostgreSQL), GTID (MariaDB), and commit LSN and time when the commit
// stream gave them. One line per record, fields in this order, empty ones
// left out: {"id":..,"xid":..,"snapshot":..,"gtid":..,"commit_lsn":..,
// "commit_time":..,"resolved_by":"commit stream"} (resolved_by: a
// transaction the client saw as unknown that the commit stream showed
// committed). Appended by hand (one per transaction; encoding/json's
// reflection was the recorder's largest cost per transaction).
func (r *recorder) evidence(t *history.Txn, xid uint64, snap, gtid string, cr *db.CommitRecord, resolved bool) error {
	if r.ef == nil || (xid == 0 && gtid == "" && snap == "") {
		return nil
	}
	b := appendJSONString(append(r.evBuf, `{"id":`...), t.ID)
	if xid != 0 {
		b = strconv.AppendUint(append(b, `,"xid":`...), xid, 10)
	}
	if snap != "" {
		b = appendJSONString(append(b, `,"snapshot":`...), snap)
	}
	if gtid != "" {
		b = appendJSONString(append(b, `,"gtid":`...), gtid)
	}
	if cr != nil {
		// PostgreSQL's LSN notation: upper-case hex halves.
		b = appendUpperHex(append(b, `,"commit_lsn":"`...), cr.LSN>>32)
		b = appendUpperHex(append(b, '/'), uint64(uint32(cr.LSN)))
		b = append(b, '"')
		if cr.Time != "" {
			b = appendJSONString(append(b, `,"commit_time":`...), cr.Time)
		}
	}
	if resolved {
		b = append(b, `,"resolved_by":"commit stream"`...)
	}
	r.evBuf = append(b, "}\n"...)
	if len(r.evBuf) > 64<<10 {
		return r.flushEvidence()
	}
	return nil
}

// appendJSONString appends s as a JSON string: as is when it is printable
// ASCII without quotes or backslashes (ids, xids, snapshots, GTIDs, LSNs
// and commit times always are), else through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// appendUpperHex appends x in upper-case hexadecimal without leading
// zeros (PostgreSQL's LSN halves).
func appendUpperHex(b []byte, x uint64) []byte {
	const digits = "0123456789ABCDEF"
	var tmp [16]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = digits[x&15]
		x >>= 4
		if x == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

func (r *recorder) flushEvidence() error {
	if r.ef == nil || len(r.evBuf) == 0 {
		return nil
	}
	_, err := r.ef.Write(r.evBuf)
	r.evBuf = r.evBuf[:0]
	return err
}

func (r *recorder) write(t *history.Txn) error {
	if r.w == nil || r.werr != nil {
		return nil
	}
	if err := r.w.WriteTxn(r.h, t); err != nil {
		r.failWrite(err)
		return nil
	}
	r.written++
	return nil
}

// failWrite records the first history write failure and stops the run.
func (r *recorder) failWrite(err error) {
	if r.werr != nil {
		return
	}
	r.werr = err
	if r.stop != nil {
		r.stop()
	}
}

// flush pushes buffered lines to the file, stopping the run on failure.
func (r *recorder) flush() {
	if r.w == nil || r.werr != nil {
		return
	}
	if err := r.w.Flush(); err != nil {
		r.failWrite(err)
	}
}

// poll reads the commit stream once, on the recorder's goroutine (the
// last read, after the workload).
func (r *recorder) poll(ctx context.Context) {
	if r.stream == nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, r.cfg.StatementTimeout)
	defer cancel()
	recs, err := r.stream.Poll(pctx)
	r.takeCommits(recs, err)
}

// takeCommits keeps the commit records of one read of the stream; a failed
// read ends the commit order (a warning says so).
func (r *recorder) takeCommits(recs []db.CommitRecord, err error) {
	if r.stream == nil {
		return
	}
	if err != nil {
		r.warn(fmt.Sprintf("commit stream: %v; later commits get no commit order", err))
		r.stream = nil
		r.h.Evidence.CommitOrder = false
		return
	}
	for _, c := range recs {
		r.commits[uint32(c.XID)] = c
	}
}

// drain writes pending transactions from the head while their commit
// position is known (or, at the end, whatever is known).
func (r *recorder) drain(final bool) error {
	i, err := r.drainFrom(final)
	if i > 0 {
		// Move what is left to the front once, so the slice keeps its
		// capacity (popping with pending[1:] gave the front up, and the
		// clients' next appends reallocated it after every commit
		// stream read).
		r.pending = r.pending[:copy(r.pending, r.pending[i:])]
	}
	return err
}

// drainFrom writes pending transactions from the head (see drain) and
// returns how many it wrote.
func (r *recorder) drainFrom(final bool) (int, error) {
	for i, p := range r.pending {
		t := &r.h.Txns[p.idx]
		if p.xid != 0 {
			cr, ok := r.commits[uint32(p.xid)]
			if !ok && !final {
				return i, nil
			}
			resolved := false
			var crp *db.CommitRecord
			if ok {
				delete(r.commits, uint32(p.xid))
				crp = &cr
				t.CommitTS = history.Timestamp{P: int64(cr.LSN), Set: true}
				if t.Status == history.Unknown {
					// The WAL says it committed: the outcome is known.
					t.Status, resolved = history.Committed, true
				}
			} else if t.Status == history.Committed {
				r.warn("some committed transactions were not found in the commit stream; the history has no exact commit order")
				r.h.Evidence.CommitOrder = false
			}
			if t.Status == history.Unknown {
				r.forgetReads(t)
			}
			if err := r.evidence(t, p.xid, p.snap, "", crp, resolved); err != nil {
				return i, err
			}
		}
		if err := r.write(t); err != nil {
			return i, err
		}
	}
	return len(r.pending), nil
}

func (r *recorder) finish(ctx context.Context) error {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, p := range r.late {
		r.takeCommits(p.recs, p.err)
	}
	r.poll(ctx)
	keep(r.drain(true))
	keep(r.certify())
	keep(r.flushEvidence())
	if r.w != nil && r.werr == nil {
		if err := r.w.Close(); err != nil {
			r.failWrite(err)
		}
	}
	if r.ef != nil {
		keep(r.ef.Sync())
	}
	if r.cfg.afterFinish != nil {
		r.cfg.afterFinish(r)
	}
	return firstErr
}

// WithoutPredicateReads returns a copy of h without its predicate reads and
// how many it dropped (h itself is unchanged; ops are shared). Checkers
// that cannot interpret predicate reads (Elle's rw-register) can check the
// projection: dropping reads only removes constraints, so a serializable
// history stays serializable and any anomaly found in the projection is
// one of h (Adya 1999: a read contributes only wr and rw edges).
func WithoutPredicateReads(h *history.History) (*history.History, int) {
	p := *h
	p.Txns = make([]history.Txn, len(h.Txns))
	n := 0
	for i, t := range h.Txns {
		ops := make([]history.Op, 0, len(t.Ops))
		for _, o := range t.Ops {
			if o.Kind == history.PredRead {
				n++
				continue
			}
			ops = append(ops, o)
		}
		t.Ops = ops
		p.Txns[i] = t
	}
	p.Evidence.PredicateRead = false
	return &p, n
}

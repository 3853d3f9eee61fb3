package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/txray/txray/check"
	_ "github.com/txray/txray/check/elle"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/internal/findings"
	"github.com/txray/txray/internal/testenv"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// Server addresses for the integration tests; override with TXRAY_PG_URL and
// TXRAY_MYSQL_URL. The PostgreSQL adapter lowers deadlock_timeout for the
// run's sessions itself (db.pgDeadlockTimeout), as `txray run` does.
func pgURL() string {
	if u := os.Getenv("TXRAY_PG_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test"
}

func mysqlURL() string {
	if u := os.Getenv("TXRAY_MYSQL_URL"); u != "" {
		return u
	}
	return "mysql://root@127.0.0.1:3306/test"
}

// reachable skips the test when no server answers at url (nothing listens,
// unknown host, or no answer in 5 s). Any other failure (authentication,
// a missing database, a broken server) fails the test: the facts these
// tests assert must not silently go unchecked.
// contended is reachable for the long contention runs, which -short skips.
func contended(t *testing.T, url string) {
	t.Helper()
	if testing.Short() {
		t.Skip("long contention run")
	}
	reachable(t, url)
}

func reachable(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := db.Open(ctx, url, db.Options{Level: db.Serializable})
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) {
			testenv.Missing(t, "database server not reachable at %s (%v)", url, err)
		}
		t.Fatalf("database server at %s answers but cannot be used: %v", url, err)
	}
	d.Close()
}

// keepOnFailure arranges for dir (a run's output directory: history,
// evidence, certificate) to be copied, when t fails, to
// $TXRAY_ARTIFACTS/record-failed/<test name>-<unix nanos>, or
// $TMPDIR/txray-artifacts/record-failed/... when TXRAY_ARTIFACTS is unset,
// and logs where: a database test that fails (a rare timing, a server's own
// race) leaves its history for inspection with `txray check`. Call it
// after dir's t.TempDir(), so the copy runs before the removal.
func keepOnFailure(t *testing.T, dir string) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		base := os.Getenv("TXRAY_ARTIFACTS")
		if base == "" {
			base = filepath.Join(os.TempDir(), "txray-artifacts")
		}
		dst, err := keepDir(base, t.Name(), dir)
		if err != nil {
			t.Logf("keeping the failed run's output %s: %v", dir, err)
			return
		}
		t.Logf("the failed run's output (history, evidence) is kept in %s", dst)
	})
}

// keepDir copies dir's files to base/record-failed/<name>-<unix nanos>
// (name's slashes and spaces made underscores) and returns that path.
func keepDir(base, name, dir string) (string, error) {
	name = strings.NewReplacer("/", "_", " ", "_").Replace(name)
	dst := filepath.Join(base, "record-failed", fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))
	return dst, os.CopyFS(dst, os.DirFS(dir))
}

// TestKeepDirCopiesRunOutput: keepDir puts a copy of every file of a run's
// directory under base/record-failed, in a directory named after the test.
func TestKeepDirCopiesRunOutput(t *testing.T) {
	src, base := t.TempDir(), t.TempDir()
	want := map[string]string{"history.jsonl": "{\"txray\":1}\n", "evidence.jsonl": "{\"id\":\"c0-0\",\"xid\":7}\n"}
	for n, b := range want {
		if err := os.WriteFile(filepath.Join(src, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst, err := keepDir(base, "TestX/sub case", src)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dst) != filepath.Join(base, "record-failed") || !strings.HasPrefix(filepath.Base(dst), "TestX_sub_case-") {
		t.Fatalf("kept in %s", dst)
	}
	for n, b := range want {
		got, err := os.ReadFile(filepath.Join(dst, n))
		if err != nil || string(got) != b {
			t.Fatalf("%s: %q, %v; want %q", n, got, err, b)
		}
	}
}

// runRecorded runs cfg into a temp dir and checks that the recording is
// well formed: every attempt is in the history, the file decodes to the
// same history, session order is contiguous, client times are ordered.
func runRecorded(t *testing.T, cfg Config) *Result {
	t.Helper()
	cfg.Out = t.TempDir()
	keepOnFailure(t, cfg.Out)
	also := cfg.Warn
	cfg.Warn = func(s string) {
		t.Log("warning:", s)
		if also != nil {
			also(s)
		}
	}
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	h := res.History
	st := h.Stats()
	t.Logf("%s %s %s: %d txns (%d committed, %d aborted, %d unknown) in %v; aborts: %d serialization, %d deadlock, %d other",
		h.Header.DB, h.Header.Level, h.Header.Workload, st.Txns, st.Committed, st.Aborted, st.Unknown,
		res.Stats.Elapsed.Round(time.Millisecond), res.Stats.Serialization, res.Stats.Deadlock, res.Stats.Other)
	if int64(st.Txns) != res.Stats.Txns || int64(st.Committed) != res.Stats.Committed+countResolved(t, res) {
		t.Fatalf("history has %+v, runner counted %+v", st, res.Stats)
	}
	if cfg.Duration == 0 && st.Txns != cfg.Txns {
		t.Fatalf("history has %d txns, want %d", st.Txns, cfg.Txns)
	}
	if st.Committed == 0 {
		t.Fatalf("no transaction committed")
	}
	seqs := map[int32]int32{}
	for i := range h.Txns {
		tx := &h.Txns[i]
		if tx.Session < 0 || tx.Seq != seqs[tx.Session] {
			t.Fatalf("%s: session %d seq %d, want %d", h.TxnString(int32(i)), tx.Session, tx.Seq, seqs[tx.Session])
		}
		seqs[tx.Session]++
		if !tx.HasTime || tx.Complete < tx.Invoke {
			t.Fatalf("%s: bad client interval [%d,%d]", h.TxnString(int32(i)), tx.Invoke, tx.Complete)
		}
		if tx.Status == history.Committed && cfg.Workload == "predicate" && len(tx.Ops) < cfg.WL.Ops {
			// a predicate update is a read and a write per matched row
			t.Fatalf("%s: committed with %d ops, want at least %d", h.TxnString(int32(i)), len(tx.Ops), cfg.WL.Ops)
		}
		if tx.Status == history.Committed && len(tx.Ops) != cfg.WL.Ops && cfg.Workload != "rmw-register" &&
			cfg.Workload != "smallbank" && cfg.Workload != "tpcc" && cfg.Workload != "predicate" {
			t.Fatalf("%s: committed with %d ops, want %d", h.TxnString(int32(i)), len(tx.Ops), cfg.WL.Ops)
		}
		for j := range tx.Ops {
			inv, com, ok := tx.OpTime(j)
			if tx.Status == history.Committed && (!ok || inv < tx.Invoke || com > tx.Complete || com < inv) {
				t.Fatalf("%s: op %d interval [%d,%d] outside txn [%d,%d]", h.TxnString(int32(i)), j, inv, com, tx.Invoke, tx.Complete)
			}
		}
	}
	f, err := os.Open(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := jsonl.Decode(f, history.DecodeOptions{Name: res.Path})
	if err != nil {
		t.Fatalf("decode %s: %v", res.Path, err)
	}
	if len(d.Txns) != len(h.Txns) {
		t.Fatalf("file has %d txns, memory %d", len(d.Txns), len(h.Txns))
	}
	if d.Header.DB != h.Header.DB || d.Header.Level != h.Header.Level || d.Header.Workload != h.Header.Workload || d.Header.Version == "" {
		t.Fatalf("file header %+v, memory %+v", d.Header, h.Header)
	}
	if !reflect.DeepEqual(d.Header.Tables, h.Header.Tables) || len(d.RowImages) != len(h.RowImages) {
		t.Fatalf("file has tables %+v and %d row images, memory %+v and %d", d.Header.Tables, len(d.RowImages), h.Header.Tables, len(h.RowImages))
	}
	for i := range h.Txns {
		a, b := h.TxnString(int32(i)), d.TxnString(int32(i))
		if a != b || h.Txns[i].CommitTS != d.Txns[i].CommitTS {
			t.Fatalf("txn %d differs: memory %s (ts %v), file %s (ts %v)", i, a, h.Txns[i].CommitTS, b, d.Txns[i].CommitTS)
		}
	}
	return res
}

// countResolved counts unknown transactions the commit stream resolved as
// committed (they are committed in the history, unknown to the runner).
func countResolved(t *testing.T, res *Result) int64 {
	if res.EvidencePath == "" {
		return 0
	}
	b, err := os.ReadFile(res.EvidencePath)
	if err != nil {
		t.Fatal(err)
	}
	return int64(strings.Count(string(b), `"resolved_by"`))
}

// checkWith runs the named Elle checker under mdl.
func checkWith(t *testing.T, h *history.History, checker, mdl string, params map[string]string) *check.Result {
	t.Helper()
	c, ok := check.Lookup(checker)
	if !ok {
		t.Fatalf("checker %q not registered", checker)
	}
	if r, why := c.Applies(h, mdl); r <= 0 {
		t.Fatalf("checker %s does not apply: %s", checker, why)
	}
	r, err := c.Check(context.Background(), h, check.Options{Model: mdl, Params: params})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	t.Logf("%s under %s: %v %v", checker, mdl, r.Verdict, r.AnomalyTypes)
	if checker == "rw-register" && r.Verdict == check.Unknown && strings.Contains(r.Reason, "versions the evidence does not order") {
		// rw-register says valid only with a witness version order and its
		// candidate completions are heuristics (check/elle/completion.go);
		// when none works it is unknown, never invalid. Decide such a
		// history with the exact search over every version order instead
		// of accepting unknown: a recorded correct run must still be valid.
		t.Logf("rw-register found no witness version order; deciding with polygraph (version order from the evidence: %v, commit order: %v): %s",
			h.Evidence.VersionOrder, h.Evidence.CommitOrder, r.Reason)
		pr := checkWith(t, h, "polygraph", mdl, nil)
		if pr.Verdict == check.Invalid {
			logSecondOpinions(t, h, mdl)
		}
		return pr
	}
	return r
}

// logSecondOpinions logs, for a history a checker called invalid under mdl,
// the verdicts of emme (under mdl, from the recorded version order) and
// leopard (under the database's own profile, from the client intervals)
// where they apply: evidence, kept with the failed run's history
// (keepOnFailure), for telling a database's anomaly from a checker's or the
// recorder's fault.
func logSecondOpinions(t *testing.T, h *history.History, mdl string) {
	t.Helper()
	for _, o := range []struct{ checker, model string }{{"emme", mdl}, {"leopard", h.Header.DB + ":" + h.Header.Level}} {
		c, ok := check.Lookup(o.checker)
		if !ok {
			continue
		}
		if a, why := c.Applies(h, o.model); a <= 0 {
			t.Logf("second opinion: %s does not apply under %s: %s", o.checker, o.model, why)
			continue
		}
		r, err := c.Check(context.Background(), h, check.Options{Model: o.model})
		if err != nil {
			t.Logf("second opinion: %s under %s: %v", o.checker, o.model, err)
			continue
		}
		t.Logf("second opinion: %s under %s: %v %v %s", o.checker, o.model, r.Verdict, r.AnomalyTypes, r.Reason)
		for _, a := range r.Anomalies {
			t.Logf("  %s: %s", a.Type, a.Explanation)
		}
	}
}

func wantValid(t *testing.T, r *check.Result) {
	t.Helper()
	if r.Verdict != check.Valid {
		for _, a := range r.Anomalies {
			t.Logf("%s: %s", a.Type, a.Explanation)
		}
		t.Fatalf("verdict %v (%v), want valid: %s", r.Verdict, r.AnomalyTypes, r.Reason)
	}
}

// wantValidOrPGSSIFinding is wantValid, except that on PostgreSQL an
// invalid verdict explained by PostgreSQL 15's own SSI race is accepted
// and logged: every anomaly a G2-item, and polygraph (an independent
// checker) rejecting the history too (findings.PostgresSSIRace,
// docs/findings.md). That is a true finding about the database, not what
// the caller's test is about; any other invalid verdict fails.
// It reports whether the race was accepted (the history is not valid).
func wantValidOrPGSSIFinding(t *testing.T, dbURL string, h *history.History, r *check.Result) bool {
	t.Helper()
	if strings.HasPrefix(dbURL, "postgres") && r.Verdict == check.Invalid {
		ok, why := findings.PostgresSSIRace(context.Background(), h, r)
		if ok {
			t.Log(why)
			return true
		}
		t.Logf("not PostgreSQL's SSI race: %s", why)
	}
	wantValid(t, r)
	return false
}

// wantAnomaly requires an invalid verdict with at least one of types.
func wantAnomaly(t *testing.T, r *check.Result, types ...string) {
	t.Helper()
	if r.Verdict != check.Invalid {
		t.Fatalf("verdict %v, want invalid with one of %v (reason %q)", r.Verdict, types, r.Reason)
	}
	for _, got := range r.AnomalyTypes {
		for _, w := range types {
			if got == w {
				for _, a := range r.Anomalies {
					if a.Type == got {
						t.Logf("example %s:\n%s", got, a.Explanation)
						break
					}
				}
				return
			}
		}
	}
	t.Fatalf("anomalies %v, want one of %v", r.AnomalyTypes, types)
}

// wantAllAnomalies requires an invalid verdict naming every one of types.
func wantAllAnomalies(t *testing.T, r *check.Result, types ...string) {
	t.Helper()
	if r.Verdict != check.Invalid {
		t.Fatalf("verdict %v, want invalid with %v (reason %q)", r.Verdict, types, r.Reason)
	}
	for _, w := range types {
		found := false
		for _, got := range r.AnomalyTypes {
			found = found || got == w
		}
		if !found {
			t.Fatalf("anomalies %v, want all of %v (%s missing)", r.AnomalyTypes, types, w)
		}
	}
}

// Serializability anomalies a read-committed run shows (Adya 1999 §4.4
// G-single, §4.4.3 G2-item; Elle §6) plus Elle's lost-update.
var notSerializable = []string{"G-single", "G-single-item", "G-single-process", "G-single-item-process",
	"G2-item", "G2", "G2-item-process", "G-nonadjacent", "G-nonadjacent-item", "G-nonadjacent-process",
	"G-nonadjacent-item-process", "lost-update", "G1c"}

func TestSQLiteSerializableListAppendIsSerializable(t *testing.T) {
	res := runRecorded(t, Config{Workload: "list-append", Clients: 4, Txns: 1000,
		WL: workload.Config{Keys: 10, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
	h := res.History
	if h.Header.DB != "sqlite" || h.Header.Level != db.Serializable || !h.Evidence.ClientTime || !h.Evidence.Sessions {
		t.Fatalf("header %+v evidence %+v", h.Header, h.Evidence)
	}
	wantValid(t, checkWith(t, h, "list-append", "serializable", nil))
}

func TestSQLiteSerializableRMWRegisterIsSerializable(t *testing.T) {
	res := runRecorded(t, Config{Workload: "rmw-register", Clients: 4, Txns: 1000,
		WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.3, MaxWritesPerKey: 32}})
	wantValid(t, checkWith(t, res.History, "rw-register", "serializable", map[string]string{"wfr-keys": "true"}))
}

// wantValidFor is wantValid for workload w, except that blind writes alone
// (blindw-w) reveal no dependency to a black-box checker: there anything but
// invalid is right.
func wantValidFor(t *testing.T, w string, r *check.Result) {
	t.Helper()
	if w == "blindw-w" {
		if r.Verdict == check.Invalid {
			t.Fatalf("blindw-w invalid: %v", r.AnomalyTypes)
		}
		return
	}
	wantValid(t, r)
}

func TestSQLiteWorkloadsRecord(t *testing.T) {
	for _, w := range []string{"rw-register", "blindw-w", "blindw-rw", "blindw-rw+"} {
		t.Run(w, func(t *testing.T) {
			res := runRecorded(t, Config{Workload: w, Clients: 3, Txns: 300,
				WL: workload.Config{Keys: 8, Ops: 4, ReadRatio: 0.5, Dist: "zipfian"}})
			wantValidFor(t, w, checkWith(t, res.History, "rw-register", "serializable", nil))
		})
	}
}

func TestPostgresSerializableIsSerializable(t *testing.T) {
	reachable(t, pgURL())
	for _, tc := range []struct{ workload, checker string }{{"list-append", "list-append"}, {"rw-register", "rw-register"}} {
		t.Run(tc.workload, func(t *testing.T) {
			res := runRecorded(t, Config{DB: pgURL(), Level: db.Serializable, Workload: tc.workload, Clients: 4, Txns: 400,
				WL: workload.Config{Keys: 10, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
			h := res.History
			checkPGEvidence(t, res)
			// PostgreSQL 15's SSI race (docs/findings.md) sometimes commits a
			// G2-item, seen here in rw-register at read ratio 0.5 too
			// (testdata/findings/postgres-ssi-g2-rw-register.jsonl): accepted
			// only as a G2-item polygraph confirms, and then strictness is moot.
			if wantValidOrPGSSIFinding(t, pgURL(), h, checkWith(t, h, tc.checker, "serializable", nil)) {
				return
			}
			// PostgreSQL serializable is also strict: a transaction that
			// completed before another began is serialized first.
			wantValid(t, checkWith(t, h, tc.checker, "strict-serializable", nil))
		})
	}
}

// checkPGEvidence requires an xid per writer that did not abort in
// evidence.jsonl (and no snapshot nothing uses) and, when the server has wal_level=logical, a commit LSN
// on every committed writer.
func checkPGEvidence(t *testing.T, res *Result) {
	t.Helper()
	h := res.History
	if res.EvidencePath == "" {
		t.Fatalf("no evidence file")
	}
	b, err := os.ReadFile(res.EvidencePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Count(string(b), "\n")
	if h.Header.DB != "postgres" {
		// MariaDB: one GTID line per committed writer.
		if lines == 0 || strings.Count(string(b), `"gtid":`) != lines {
			t.Fatalf("evidence has %d lines, %d with a gtid", lines, strings.Count(string(b), `"gtid":`))
		}
	} else {
		// An xid for every transaction that wrote a row and committed
		// (or whose outcome is unknown): it rides on the first write.
		// Read-only transactions have none; snapshots are captured only
		// for predicate reads under the transaction's snapshot.
		xid := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e struct {
				ID       string `json:"id"`
				XID      uint64 `json:"xid"`
				Snapshot string `json:"snapshot"`
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("evidence line %q: %v", l, err)
			}
			if e.Snapshot != "" && !h.Evidence.PredicateRead {
				t.Fatalf("evidence line %q has a snapshot, but no checker uses it", l)
			}
			xid[e.ID] = e.XID != 0
		}
		for i := range h.Txns {
			tx := &h.Txns[i]
			if tx.Status != history.Aborted && writer(tx) && !xid[tx.ID] {
				t.Fatalf("%s: writer without an xid in evidence.jsonl", h.TxnString(int32(i)))
			}
		}
	}
	if !h.Evidence.CommitOrder {
		t.Logf("no commit order (wal_level not logical?)")
		return
	}
	// the header names the capture: the WAL's commit records, or the
	// logical slot it falls back to
	if c := h.Header.Extra["commit_ts"]; h.Header.DB == "postgres" && !strings.Contains(c, "pg_wal") && !strings.Contains(c, "test_decoding") {
		t.Fatalf("commit_ts header %q names no capture", c)
	} else {
		t.Logf("commit_ts: %s", c)
	}
	n := 0
	for i := range h.Txns {
		tx := &h.Txns[i]
		if tx.Status != history.Committed || !writer(tx) {
			continue
		}
		if !tx.CommitTS.Set {
			t.Fatalf("%s: committed writer without commit_ts", h.TxnString(int32(i)))
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no committed writers")
	}
	// Commit order must agree with real time: a transaction that finished
	// before another began committed first.
	for i := range h.Txns {
		a := &h.Txns[i]
		if !a.CommitTS.Set {
			continue
		}
		for j := range h.Txns {
			c := &h.Txns[j]
			if c.CommitTS.Set && a.Complete < c.Invoke && !a.CommitTS.Less(c.CommitTS) {
				t.Fatalf("%s completed before %s began but commits at %v >= %v", h.TxnName(int32(i)), h.TxnName(int32(j)), a.CommitTS, c.CommitTS)
			}
		}
	}
}

func writer(t *history.Txn) bool {
	for _, o := range t.Ops {
		if o.Kind == history.Write || o.Kind == history.Append {
			return true
		}
	}
	return false
}

// TestPostgresReadCommittedListAppendNotSerializable: PostgreSQL read
// committed takes a snapshot per statement, so list-append under contention
// shows read skew and write skew cycles (G-single, G2-item; Adya 1999 §4.4)
// that serializable forbids — as Elle reports for PostgreSQL read committed.
func TestPostgresReadCommittedListAppendNotSerializable(t *testing.T) {
	contended(t, pgURL())
	res := runRecorded(t, Config{DB: pgURL(), Level: db.ReadCommitted, Workload: "list-append", Clients: 8, Txns: 2000,
		WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
	checkPGEvidence(t, res)
	wantValid(t, checkWith(t, res.History, "list-append", "read-committed", nil))
	// The anomalies Elle found on PostgreSQL 15 read committed with the
	// same shape (8 clients, 5 keys, 2000 txns of 4 micro-ops). G-single-item
	// and lost-update show in every run; a G2-item (two anti-dependencies)
	// is timing-dependent (one CI run of 1,761 commits had none), so it is
	// logged, not required.
	ser := checkWith(t, res.History, "list-append", "serializable", nil)
	wantAllAnomalies(t, ser, "G-single-item", "lost-update")
	if !slices.Contains(ser.AnomalyTypes, "G2-item") {
		t.Logf("no G2-item in this run (timing-dependent): %v", ser.AnomalyTypes)
	}
}

// TestPostgresRepeatableReadIsSnapshotIsolation: PostgreSQL repeatable read
// is snapshot isolation (Berenson et al. 1995; Ports & Grittner 2012): a
// contended list-append history is valid under snapshot isolation and
// shows write skew (G2-item), which serializable forbids.
func TestPostgresRepeatableReadIsSnapshotIsolation(t *testing.T) {
	contended(t, pgURL())
	res := runRecorded(t, Config{DB: pgURL(), Level: db.RepeatableRead, Workload: "list-append", Clients: 8, Txns: 2000,
		WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
	checkPGEvidence(t, res)
	wantValid(t, checkWith(t, res.History, "list-append", "snapshot-isolation", nil))
	wantAllAnomalies(t, checkWith(t, res.History, "list-append", "serializable", nil), "G2-item")
}

// TestMariaDBRepeatableReadListAppendLostUpdate: InnoDB repeatable read
// reads a snapshot but appends to the current row, so two transactions
// that read the same list both append to it: lost update (Elle), which
// repeatable read forbids.
func TestMariaDBRepeatableReadListAppendLostUpdate(t *testing.T) {
	contended(t, mysqlURL())
	res := runRecorded(t, Config{DB: mysqlURL(), Level: db.RepeatableRead, Workload: "list-append", Clients: 8, Txns: 2000,
		WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
	wantAllAnomalies(t, checkWith(t, res.History, "list-append", "repeatable-read", nil), "lost-update")
}

// TestPostgresReadCommittedRMWLostUpdate: a read then a blind write of the
// same register in two statements loses updates under read committed
// (Berenson et al. 1995 P4; Adya G2-item).
func TestPostgresReadCommittedRMWLostUpdate(t *testing.T) {
	contended(t, pgURL())
	res := runRecorded(t, Config{DB: pgURL(), Level: db.ReadCommitted, Workload: "rmw-register", Clients: 8, Txns: 2000,
		WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.2, MaxWritesPerKey: 32}})
	wantAnomaly(t, checkWith(t, res.History, "rw-register", "serializable", map[string]string{"wfr-keys": "true"}),
		"lost-update")
}

// TestMariaDBRepeatableReadRMWLostUpdate: MariaDB (InnoDB) repeatable read
// reads from a snapshot but writes the current row version without a
// conflict check, so read-modify-write loses updates, which repeatable
// read (Adya PL-2.99) forbids.
func TestMariaDBRepeatableReadRMWLostUpdate(t *testing.T) {
	contended(t, mysqlURL())
	res := runRecorded(t, Config{DB: mysqlURL(), Level: db.RepeatableRead, Workload: "rmw-register", Clients: 8, Txns: 1500,
		WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.2, MaxWritesPerKey: 32}})
	wantAnomaly(t, checkWith(t, res.History, "rw-register", "repeatable-read", map[string]string{"wfr-keys": "true"}),
		"lost-update")
}

func TestMariaDBSerializableIsSerializable(t *testing.T) {
	reachable(t, mysqlURL())
	res := runRecorded(t, Config{DB: mysqlURL(), Level: db.Serializable, Workload: "list-append", Clients: 8, Txns: 2000,
		WL: workload.Config{Keys: 5, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
	wantValid(t, checkWith(t, res.History, "list-append", "serializable", nil))
}

// TestCrashLeavesReadablePrefix: the history is written as the run goes, so
// the file is a decodable prefix at any time.
func TestHistoryFileIsIncremental(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Workload: "list-append", Clients: 2, Duration: 1500 * time.Millisecond, Out: dir, Seed: 7,
		WL: workload.Config{Keys: 10, Ops: 4, ReadRatio: 0.5}}
	done := make(chan error, 1)
	go func() { _, err := Run(context.Background(), cfg); done <- err }()
	time.Sleep(700 * time.Millisecond)
	b, err := os.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		b = b[:i+1]
	}
	h, err := jsonl.Decode(strings.NewReader(string(b)), history.DecodeOptions{Name: "prefix"})
	if err != nil {
		t.Fatalf("prefix does not decode: %v", err)
	}
	if len(h.Txns) == 0 || h.Header.DB != "sqlite" {
		t.Fatalf("prefix has %d txns, header %+v", len(h.Txns), h.Header)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNoRecordRecordsNothing(t *testing.T) {
	res, err := Run(context.Background(), Config{Workload: "list-append", Clients: 2, Txns: 200, NoRecord: true, Seed: 1,
		WL: workload.Config{Keys: 10, Ops: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if res.History != nil || res.Path != "" || res.Stats.Txns != 200 {
		t.Fatalf("no-record run: history %v path %q stats %+v", res.History != nil, res.Path, res.Stats)
	}
}

func TestSQLitePredicateRecordsRangeReads(t *testing.T) {
	res := runRecorded(t, Config{Workload: "predicate", Clients: 3, Txns: 300,
		WL: workload.Config{Keys: 12, Ops: 4, ReadRatio: 0.5}})
	h := res.History
	if !h.Evidence.PredicateRead {
		t.Fatal("predicate evidence flag not set")
	}
	preds, rows := 0, 0
	for i := range h.Txns {
		for j := range h.Txns[i].Ops {
			o := &h.Txns[i].Ops[j]
			if o.Kind != history.PredRead {
				continue
			}
			pr := h.Txns[i].PredOf(o)
			if pr == nil || pr.Table != workload.PredTable || !strings.HasPrefix(pr.Where, "k >= ") {
				t.Fatalf("%s: bad predicate %+v", h.TxnString(int32(i)), pr)
			}
			preds++
			rows += len(pr.Result)
		}
	}
	if preds == 0 || rows == 0 {
		t.Fatalf("%d predicate reads returning %d rows", preds, rows)
	}
}

// TestSmallBankSerializable: SmallBank run at serializable gives a history
// of account versions that Elle's rw-register checker finds serializable.
func TestSmallBankSerializable(t *testing.T) {
	urls := []string{""}
	if !testing.Short() {
		urls = append(urls, pgURL())
	}
	for _, u := range urls {
		name := "sqlite"
		if u != "" {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			if u != "" {
				reachable(t, u)
			}
			res := runRecorded(t, Config{DB: u, Level: db.Serializable, Workload: "smallbank", Clients: 4, Txns: 600,
				WL: workload.Config{Keys: 20, Ops: 4, Dist: "hotspot"}})
			wantValid(t, checkWith(t, res.History, "rw-register", "serializable", map[string]string{"wfr-keys": "true"}))
		})
	}
}

// TestPostgresReadCommittedSmallBankLostUpdate: SmallBank's client-side
// read-modify-write of balances loses updates under read committed.
func TestPostgresReadCommittedSmallBankLostUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("contention run")
	}
	reachable(t, pgURL())
	res := runRecorded(t, Config{DB: pgURL(), Level: db.ReadCommitted, Workload: "smallbank", Clients: 8, Txns: 1500,
		WL: workload.Config{Keys: 5, Ops: 4}})
	wantAnomaly(t, checkWith(t, res.History, "rw-register", "serializable", map[string]string{"wfr-keys": "true"}),
		"lost-update")
}

// TestPostgresKilledSessionsAreRecorded terminates client backends while
// the workload runs (pg_terminate_backend, as an operator or a crash
// would): the run must go on on new sessions, every attempt must be in the
// history (aborted, or unknown when the kill hit COMMIT; never dropped), and
// the serializable history must still be valid.
func TestPostgresKilledSessionsAreRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("fault injection run")
	}
	reachable(t, pgURL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killer, err := db.Open(ctx, pgURL(), db.Options{Level: db.Serializable})
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close()
	kc, err := killer.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	killed := 0
	done := make(chan struct{})
	// The killer starts once the clients run (onStart), so it never hits
	// the run's own setup statements, and kills only sessions inside a
	// workload transaction (the setup session, idle after setup, still
	// shows its last txray_append statement in pg_stat_activity).
	started := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			return
		case <-started:
		}
		tick := time.NewTicker(150 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 40; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows, err := kc.Query(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
				AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')
				AND query LIKE '%txray_append%' AND query NOT LIKE '%pg_stat_activity%' LIMIT 1`)
			if err != nil {
				return
			}
			for rows.Next() {
				killed++
			}
			rows.Close()
		}
	}()
	res := runRecorded(t, Config{DB: pgURL(), Level: db.Serializable, Workload: "list-append", Clients: 4,
		Duration: 4 * time.Second, WL: workload.Config{Keys: 10, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32},
		onStart: func() { close(started) }})
	cancel()
	<-done
	h := res.History
	t.Logf("killed %d backends; connection errors %d; unknown %d; sessions %d", killed, res.Stats.Connection, res.Stats.Unknown, h.Sessions.Len())
	if killed > 0 && res.Stats.Connection == 0 {
		t.Fatalf("%d backends killed but no connection error recorded", killed)
	}
	if res.Stats.Connection > 0 && h.Sessions.Len() <= 4 {
		t.Fatalf("connection errors but no new sessions (%d)", h.Sessions.Len())
	}
	wantValidOrPGSSIFinding(t, pgURL(), h, checkWith(t, h, "list-append", "serializable", nil))
}

// TestMariaDBGTIDCommitOrder: with the binary log on, every committed
// writer gets commit_ts = its GTID sequence number, and that order agrees
// with real time. Uses TXRAY_MYSQL_BINLOG_URL if set (a server started
// with --log-bin), else the default server, and skips when it has no binlog.
func TestMariaDBGTIDCommitOrder(t *testing.T) {
	u := os.Getenv("TXRAY_MYSQL_BINLOG_URL")
	if u == "" {
		u = mysqlURL()
	}
	reachable(t, u)
	res := runRecorded(t, Config{DB: u, Level: db.Serializable, Workload: "rw-register", Clients: 4, Txns: 400,
		WL: workload.Config{Keys: 10, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
	h := res.History
	if !h.Evidence.CommitOrder {
		testenv.Missing(t, "MariaDB at %s has no binary log (start it with --log-bin, or set TXRAY_MYSQL_BINLOG_URL)", u)
	}
	seen := map[history.Timestamp]int32{}
	for i := range h.Txns {
		tx := &h.Txns[i]
		if tx.Status != history.Committed || !writer(tx) {
			if tx.CommitTS.Set {
				t.Fatalf("%s has commit_ts %v", h.TxnString(int32(i)), tx.CommitTS)
			}
			continue
		}
		if !tx.CommitTS.Set {
			t.Fatalf("%s: committed writer without commit_ts", h.TxnString(int32(i)))
		}
		if j, dup := seen[tx.CommitTS]; dup {
			t.Fatalf("%s and %s share commit_ts %v", h.TxnName(j), h.TxnName(int32(i)), tx.CommitTS)
		}
		seen[tx.CommitTS] = int32(i)
	}
	checkPGEvidence(t, res)
	wantValid(t, checkWith(t, h, "rw-register", "serializable", nil))
}

// TestTPCCSerializable: the TPC-C subset at serializable records a history
// Elle's rw-register checker finds serializable, with predicate reads and
// New-Order's user rollbacks.
func TestTPCCSerializable(t *testing.T) {
	urls := []string{""}
	if !testing.Short() {
		urls = append(urls, pgURL(), mysqlURL())
	}
	for _, u := range urls {
		name := "sqlite"
		if u != "" {
			name = strings.SplitN(u, ":", 2)[0]
		}
		t.Run(name, func(t *testing.T) {
			if u != "" {
				reachable(t, u)
			}
			res := runRecorded(t, Config{DB: u, Level: db.Serializable, Workload: "tpcc", Clients: 4, Txns: 400,
				WL: workload.Config{Keys: 1, Ops: 4}})
			h := res.History
			preds := 0
			for i := range h.Txns {
				for _, o := range h.Txns[i].Ops {
					if o.Kind == history.PredRead {
						preds++
					}
				}
			}
			if preds == 0 {
				t.Fatal("no predicate reads recorded")
			}
			wantValid(t, checkWith(t, withoutPredReads(h), "rw-register", "serializable", map[string]string{"wfr-keys": "true"}))
			// The predicate reads are decidable: the header declares the
			// tables and writes carry row images, so the certificate
			// checkers evaluate every WHERE clause on every version (a
			// definite verdict, never unknown for want of columns): emme
			// with the version sets PostgreSQL's snapshots give; enne with
			// the expected serialization order of MariaDB and SQLite
			// (commit order; without version sets, a new-order row a
			// Delivery did not return may be unborn or already deleted,
			// which emme cannot tell apart).
			if len(h.Header.Tables) == 0 || len(h.RowImages) == 0 {
				t.Fatalf("tables %v, %d row images", h.Header.Tables, len(h.RowImages))
			}
			if !h.Evidence.VersionOrder {
				t.Fatal("no version order")
			}
			checker := "enne"
			if name == "postgres" {
				checker = "emme"
			}
			wantValidOrPGSSIFinding(t, u, h, checkWith(t, h, checker, "serializable", nil))
		})
	}
}

// withoutPredReads is record.WithoutPredicateReads for the tests.
func withoutPredReads(h *history.History) *history.History {
	p, _ := WithoutPredicateReads(h)
	return p
}

// TestPostgresReadCommittedTPCCLostUpdate: Payment and New-Order update
// warehouse, district and customer rows by client-side read-modify-write,
// which loses updates under read committed.
func TestPostgresReadCommittedTPCCLostUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("contention run")
	}
	reachable(t, pgURL())
	res := runRecorded(t, Config{DB: pgURL(), Level: db.ReadCommitted, Workload: "tpcc", Clients: 8, Txns: 1000,
		WL: workload.Config{Keys: 1, Ops: 4}})
	wantAnomaly(t, checkWith(t, withoutPredReads(res.History), "rw-register", "serializable", map[string]string{"wfr-keys": "true"}),
		"lost-update")
}

// TestConcurrentRunsDoNotMix: two runs on the same server database (as
// when several test binaries or users share it) would drop and fill the
// same tables; the run lock makes the second wait, so each history is the
// database's alone and valid at serializable.
func TestConcurrentRunsDoNotMix(t *testing.T) {
	for _, u := range []string{pgURL(), mysqlURL()} {
		t.Run(strings.SplitN(u, ":", 2)[0], func(t *testing.T) {
			reachable(t, u)
			cfg := Config{DB: u, Level: db.Serializable, Workload: "list-append", Clients: 3, Duration: 1200 * time.Millisecond,
				WL: workload.Config{Keys: 6, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}}
			// The first run goes on a goroutine, which must not call
			// t.Fatal: it hands back its result, checked below.
			type out struct {
				res *Result
				err error
			}
			// Deterministic order: A takes the lock, then holds still
			// until B has found the lock taken and started waiting, so B
			// must wait however slowly either run starts.
			first := make(chan out, 1)
			aLocked, bWaiting := make(chan struct{}), make(chan struct{})
			var bWaitOnce sync.Once
			go func() {
				a := cfg
				a.Out = t.TempDir()
				a.Seed = 42
				a.afterLock = func() {
					close(aLocked)
					select {
					case <-bWaiting:
					case <-time.After(2 * time.Minute):
						// B never waited: it fails below on waited.
					}
				}
				res, err := Run(context.Background(), a)
				first <- out{res, err}
			}()
			<-aLocked
			var waited atomic.Bool
			b := cfg
			b.Seed = 43
			b.Warn = func(s string) {
				if strings.Contains(s, "another txray run") {
					waited.Store(true)
					bWaitOnce.Do(func() { close(bWaiting) })
				}
			}
			resB := runRecorded(t, b)
			a := <-first
			if a.err != nil {
				t.Fatalf("first run: %v", a.err)
			}
			resA := a.res
			if !waited.Load() {
				t.Fatalf("second run did not wait for the first")
			}
			// Mixed runs would show reads of the other run's elements
			// (garbage, aborted, duplicate or incompatible lists, G0/G1).
			// PostgreSQL 15's SERIALIZABLE itself sometimes commits a
			// G2-item (docs/findings.md; ../shared/testdata/postgres-ssi-g2),
			// seen here even at read ratio 0.5: that finding is logged, not
			// taken for mixing.
			wantValidOrPGSSIFinding(t, u, resA.History, checkWith(t, resA.History, "list-append", "serializable", nil))
			wantValidOrPGSSIFinding(t, u, resB.History, checkWith(t, resB.History, "list-append", "serializable", nil))
		})
	}
}

// TestEveryWorkloadEveryDatabaseSerializable runs each workload briefly on
// each database at serializable and checks the history under serializable:
// a correct database must give no anomaly (no false positives from the
// recorder or a workload's encoding). Histories with predicate reads are
// checked through their projection without them (withoutPredReads).
func TestEveryWorkloadEveryDatabaseSerializable(t *testing.T) {
	for _, u := range []string{"", pgURL(), mysqlURL()} {
		name := "sqlite"
		if u != "" {
			name = strings.SplitN(u, ":", 2)[0]
		}
		t.Run(name, func(t *testing.T) {
			if u != "" {
				reachable(t, u)
			}
			for _, w := range workload.Names() {
				t.Run(w, func(t *testing.T) {
					keys := 8
					if w == "tpcc" {
						keys = 1
					}
					res := runRecorded(t, Config{DB: u, Level: db.Serializable, Workload: w, Clients: 4, Txns: 200,
						WL: workload.Config{Keys: keys, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32}})
					h := res.History
					if h.Header.Level != db.Serializable {
						t.Fatalf("header level %q", h.Header.Level)
					}
					checker, mdl, params := "rw-register", "serializable", map[string]string{}
					switch w {
					case "list-append":
						checker = "list-append"
					case "rmw-register", "smallbank", "tpcc":
						params["wfr-keys"] = "true"
					case "predicate":
						// Only leopard interprets predicate reads; it checks
						// the mechanisms of the database's serializable
						// profile (the projection without them is blind
						// writes only).
						checker, mdl = "leopard", h.Header.DB+":serializable"
					}
					if !h.Evidence.PredicateRead && (w == "predicate" || w == "tpcc") {
						t.Fatalf("%s: header does not declare predicate reads", w)
					}
					if h.Evidence.PredicateRead && checker != "leopard" {
						h = withoutPredReads(h)
					}
					wantValidFor(t, w, checkWith(t, h, checker, mdl, params))
				})
			}
		})
	}
}

// TestPostgresInterruptedRunIsCompleteAndDropsSlot: cancelling the run's
// context (what SIGINT does in `txray run`) stops new transactions, lets
// those in flight finish, and returns the complete history (every attempt,
// commit order still matched), and the logical decoding slot the run
// created is gone afterwards.
func TestPostgresInterruptedRunIsCompleteAndDropsSlot(t *testing.T) {
	reachable(t, pgURL())
	ctx, cancel := context.WithCancel(context.Background())
	// The interrupt comes 1 s after the clients start (onStart), not after
	// a fixed time from the call: the run may first wait for another txray
	// run's lock, and an interrupt then is a different case.
	cfg := Config{DB: pgURL(), Level: db.Serializable, Workload: "list-append", Clients: 4, Duration: time.Minute, Seed: 3,
		Out: t.TempDir(), WL: workload.Config{Keys: 10, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32},
		Warn: func(s string) { t.Log("warning:", s) }}
	var start time.Time // when the clients started (after any wait for the lock)
	cfg.onStart = func() {
		start = time.Now()
		time.AfterFunc(time.Second, cancel)
	}
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("interrupted run: %v", err)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Fatalf("interrupted run took %v", el)
	}
	h := res.History
	if int64(len(h.Txns)) != res.Stats.Txns || res.Stats.Txns == 0 {
		t.Fatalf("history has %d txns, runner counted %d", len(h.Txns), res.Stats.Txns)
	}
	f, err := os.Open(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := jsonl.Decode(f, history.DecodeOptions{Name: res.Path})
	if err != nil || len(d.Txns) != len(h.Txns) {
		t.Fatalf("file: %v, %d txns, want %d", err, len(d.Txns), len(h.Txns))
	}
	if h.Evidence.CommitOrder {
		for i := range h.Txns {
			if tx := &h.Txns[i]; tx.Status == history.Committed && writer(tx) && !tx.CommitTS.Set {
				t.Fatalf("%s: committed writer without commit_ts after interrupt", h.TxnString(int32(i)))
			}
		}
	}
	wantValid(t, checkWith(t, h, "list-append", "serializable", nil))
	c, err := pgx.Connect(context.Background(), pgURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE $1",
		fmt.Sprintf("txray_%d_%%", os.Getpid())).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d replication slots of this process left behind", n)
	}
}

// TestPostgresWithoutSlotPrivilegeStillRecords: a server that does not let
// the run read commit order (here: a role without the REPLICATION
// privilege, which cannot create a logical replication slot; wal_level
// below logical takes the same path) gives one notice, and the run records
// everything else: xids, snapshots, client times; the header says commit
// order is absent. The role and its database are created on the test
// server (the default user is a superuser); the test skips if it cannot.
func TestPostgresWithoutSlotPrivilegeStillRecords(t *testing.T) {
	reachable(t, pgURL())
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pgURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var super bool
	if err := admin.QueryRow(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&super); err != nil || !super {
		testenv.Missing(t, "%s is not a superuser (%v): cannot create the unprivileged role", pgURL(), err)
	}
	var n int
	_ = admin.QueryRow(ctx, "SELECT count(*) FROM pg_roles WHERE rolname = 'txray_noslot'").Scan(&n)
	if n == 0 {
		if _, err := admin.Exec(ctx, "CREATE ROLE txray_noslot LOGIN NOSUPERUSER NOREPLICATION"); err != nil {
			t.Fatal(err)
		}
	}
	_ = admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = 'txray_noslot'").Scan(&n)
	if n == 0 {
		if _, err := admin.Exec(ctx, "CREATE DATABASE txray_noslot OWNER txray_noslot"); err != nil {
			t.Fatal(err)
		}
	}
	u := "postgres://txray_noslot@" + admin.Config().Host + ":" + fmt.Sprint(admin.Config().Port) + "/txray_noslot"
	var warnings []string
	res := runRecorded(t, Config{DB: u, Level: db.Serializable, Workload: "list-append", Clients: 3, Txns: 300,
		WL:   workload.Config{Keys: 8, Ops: 4, ReadRatio: 0.5, MaxWritesPerKey: 32},
		Warn: func(s string) { warnings = append(warnings, s) }})
	h := res.History
	slotNotices := 0
	for _, w := range warnings {
		if strings.Contains(w, "commit order") {
			slotNotices++
		}
	}
	if slotNotices != 1 {
		t.Fatalf("%d notices about commit order, want 1: %q", slotNotices, warnings)
	}
	if h.Evidence.CommitOrder || h.Header.Extra["commit_ts"] != "" {
		t.Fatalf("header claims commit order: %+v %q", h.Evidence, h.Header.Extra["commit_ts"])
	}
	for i := range h.Txns {
		if h.Txns[i].CommitTS.Set {
			t.Fatalf("%s has a commit_ts without commit-order evidence", h.TxnString(int32(i)))
		}
	}
	checkPGEvidence(t, res) // an xid per writer
	wantValid(t, checkWith(t, h, "list-append", "serializable", nil))
}

package model

import (
	"sort"
	"strings"
)

// Mechanism is one of the four building blocks Leopard (Li et al., "Leopard:
// A Black-Box Approach for Efficiently Verifying Various Isolation Levels",
// ICDE 2023) decomposes every commercial concurrency-control protocol
// into.
type Mechanism string

const (
	// ConsistentRead: reads return the versions visible in a snapshot taken
	// at transaction start or at each statement's start (MVCC).
	ConsistentRead Mechanism = "consistent-read"
	// MutualExclusion: conflicting accesses are serialized by locks held
	// until commit (two-phase locking of writes, and of reads where used).
	MutualExclusion Mechanism = "mutual-exclusion"
	// FirstUpdaterWins: of two concurrent transactions updating one item,
	// at most one commits.
	FirstUpdaterWins Mechanism = "first-updater-wins"
	// SerializationCertifier: a commit-time (or read-time) check rejects
	// transactions that would close a dependency cycle (SSI, timestamp
	// ordering, OCC validation).
	SerializationCertifier Mechanism = "serialization-certifier"
)

// Anomaly returns the mechanism-violation anomaly type (cr, me, fuw, sc).
func (m Mechanism) Anomaly() string { return mechanismAnomaly[m] }

// Profile is an isolation level as a particular database implements it.
type Profile struct {
	// Name is "db:level", e.g. "postgres:repeatable-read".
	Name string
	// DB and Level are the two halves of Name; Level is the database's own
	// level name, normalized.
	DB, Level string
	// Model is the canonical consistency model a correct implementation is
	// expected to satisfy; checkers judge prohibitions by it.
	Model string
	// Mechanisms are the Leopard mechanisms the level is built from.
	Mechanisms []Mechanism
	// SnapshotPerStatement is true when consistent reads take a new snapshot
	// per statement (read committed) rather than per transaction. Meaningful
	// only when Mechanisms contains ConsistentRead.
	SnapshotPerStatement bool
	// Doc explains the choice of model and mechanisms, with sources.
	Doc string
}

var (
	cr   = ConsistentRead
	me   = MutualExclusion
	fuw  = FirstUpdaterWins
	sc   = SerializationCertifier
	mech = func(ms ...Mechanism) []Mechanism { return ms }
)

// profiles: mechanisms follow Leopard's decomposition (ICDE 2023 Table I)
// as far as it could be established, cross-checked against each database's
// documentation; see Doc.
var profiles = []Profile{
	// PostgreSQL and its derivatives.
	{DB: "postgres", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "statement snapshots; row write locks, a blocked UPDATE re-evaluates on the newest version (lost update allowed) (PostgreSQL docs, Read Committed Isolation Level)"},
	{DB: "postgres", Level: "repeatable-read", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "snapshot isolation: transaction snapshot, concurrent update of a row aborts with a serialization failure (PostgreSQL docs, Repeatable Read Isolation Level; Ports & Grittner VLDB 2012)"},
	{DB: "postgres", Level: "serializable", Model: Serializable, Mechanisms: mech(cr, fuw, sc),
		Doc: "serializable snapshot isolation: SI plus an rw-antidependency certifier (PostgreSQL docs, Serializable Isolation Level; Ports & Grittner VLDB 2012)"},
	{DB: "opengauss", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "PostgreSQL-derived: statement snapshots and row write locks"},
	{DB: "opengauss", Level: "repeatable-read", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "PostgreSQL-derived snapshot isolation with first-updater-wins"},
	{DB: "opengauss", Level: "serializable", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "openGauss documents SERIALIZABLE as not supported and equivalent to REPEATABLE READ (no SSI certifier), so only snapshot isolation is expected"},
	{DB: "yugabytedb", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "statement snapshots with write locks (YugabyteDB docs, Read Committed isolation)"},
	{DB: "yugabytedb", Level: "repeatable-read", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "YugabyteDB's REPEATABLE READ is snapshot isolation: write-write conflicts abort a transaction (YugabyteDB docs, Snapshot isolation)"},
	{DB: "yugabytedb", Level: "serializable", Model: Serializable, Mechanisms: mech(me),
		Doc: "reads and writes take locks (pessimistic or optimistic conflict detection) (YugabyteDB docs, Serializable isolation)"},

	// InnoDB: MySQL and MariaDB.
	{DB: "mysql", Level: "read-uncommitted", Model: ReadUncommitted, Mechanisms: mech(me),
		Doc: "no snapshot; write locks held to commit prevent dirty writes (MySQL docs, InnoDB Transaction Isolation Levels)"},
	{DB: "mysql", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "each consistent read sets a fresh snapshot; locking reads and writes lock the newest version (MySQL docs, InnoDB Transaction Isolation Levels)"},
	{DB: "mysql", Level: "repeatable-read", Model: ReadCommitted, Mechanisms: mech(cr, me),
		Doc: "plain SELECTs read the transaction snapshot but UPDATE/DELETE/locking reads act on the newest committed version, so lost update, G-single and G2-item are allowed; Jepsen (MySQL 8.0.34, 2023) also observed internal and monotonic-atomic-view violations, so the strongest Elle model it is expected to satisfy is read-committed"},
	{DB: "mysql", Level: "serializable", Model: Serializable, Mechanisms: mech(me),
		Doc: "plain SELECTs become locking reads (FOR SHARE) when autocommit is off: strict two-phase locking (MySQL docs, InnoDB Transaction Isolation Levels)"},
	{DB: "mariadb", Level: "read-uncommitted", Model: ReadUncommitted, Mechanisms: mech(me),
		Doc: "InnoDB, as MySQL"},
	{DB: "mariadb", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "InnoDB, as MySQL"},
	{DB: "mariadb", Level: "repeatable-read", Model: ReadCommitted, Mechanisms: mech(cr, me),
		Doc: "InnoDB REPEATABLE READ with innodb_snapshot_isolation=OFF (MariaDB before 11.6.2, or set explicitly): as mysql:repeatable-read, lost update allowed; use mariadb:snapshot-isolation when the variable is ON"},
	{DB: "mariadb", Level: "snapshot-isolation", Model: SnapshotIsolation, Mechanisms: mech(cr, me, fuw),
		Doc: "REPEATABLE READ with innodb_snapshot_isolation=ON (MariaDB 11.6.2+): a locking read or write of a row changed after the snapshot fails with ER_CHECKREAD, giving snapshot isolation"},
	{DB: "mariadb", Level: "serializable", Model: Serializable, Mechanisms: mech(me),
		Doc: "InnoDB, as MySQL: locking reads, strict two-phase locking"},

	// SQL Server.
	{DB: "sqlserver", Level: "read-uncommitted", Model: ReadUncommitted, Mechanisms: mech(me),
		Doc: "no read locks; exclusive write locks held to commit"},
	{DB: "sqlserver", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(me),
		Doc: "locking read committed (READ_COMMITTED_SNAPSHOT OFF): short shared read locks, write locks to commit; lost update allowed"},
	{DB: "sqlserver", Level: "read-committed-snapshot", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "READ COMMITTED with READ_COMMITTED_SNAPSHOT ON: statement-level row versioning, write locks"},
	{DB: "sqlserver", Level: "repeatable-read", Model: RepeatableRead, Mechanisms: mech(me),
		Doc: "shared locks on rows read are held to commit, so a lost update becomes a deadlock, not an anomaly (Adya PL-2.99); phantoms allowed"},
	{DB: "sqlserver", Level: "snapshot-isolation", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "SNAPSHOT level: transaction-level row versioning, update conflicts abort (error 3960)"},
	{DB: "sqlserver", Level: "serializable", Model: Serializable, Mechanisms: mech(me),
		Doc: "key-range locks held to commit: strict two-phase locking"},

	// TiDB.
	{DB: "tidb", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "pessimistic mode only: statement snapshots, DML locks the newest committed version (TiDB docs, Transaction Isolation Levels)"},
	{DB: "tidb", Level: "repeatable-read", Model: ReadCommitted, Mechanisms: mech(cr, me),
		Doc: "pessimistic mode (default): SELECT reads the transaction snapshot but DML reads and locks the newest committed version, MySQL-compatible, so lost update via read-then-write is allowed; expected model read-committed as for mysql:repeatable-read"},
	{DB: "tidb", Level: "snapshot-isolation", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "optimistic mode REPEATABLE READ: Percolator snapshot isolation, write-write conflicts abort at commit (TiDB docs, Optimistic Transactions)"},

	// CockroachDB.
	{DB: "cockroachdb", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "READ COMMITTED (v23.2+): statement snapshots, write intents act as locks"},
	{DB: "cockroachdb", Level: "serializable", Model: Serializable, Mechanisms: mech(cr, me, sc),
		Doc: "MVCC snapshot at the transaction timestamp, write intents as locks, timestamp-cache/read-refresh validation as certifier; CockroachDB guarantees serializability, not strict serializability"},

	// SQLite.
	{DB: "sqlite", Level: "serializable", Model: Serializable, Mechanisms: mech(cr, me),
		Doc: "a single writer holds the database write lock; WAL readers read the snapshot taken at their first read"},

	// Oracle and OceanBase.
	{DB: "oracle", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "statement-level read consistency; row locks for writes, a blocked update restarts on the newest version"},
	{DB: "oracle", Level: "serializable", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "Oracle SERIALIZABLE is snapshot isolation: transaction-level read consistency, ORA-08177 on a concurrent update (Fekete et al. TODS 2005)"},
	{DB: "oceanbase", Level: "read-committed", Model: ReadCommitted, Mechanisms: mech(cr, me), SnapshotPerStatement: true,
		Doc: "statement snapshots with row write locks (OceanBase docs, isolation levels)"},
	{DB: "oceanbase", Level: "serializable", Model: SnapshotIsolation, Mechanisms: mech(cr, fuw),
		Doc: "OceanBase documents SERIALIZABLE as Oracle-like and not strictly serializable: snapshot isolation"},

	// Distributed serializable stores.
	{DB: "foundationdb", Level: "serializable", Model: StrictSerializable, Mechanisms: mech(cr, sc),
		Doc: "reads at a read version (snapshot), optimistic conflict checking by the resolvers at commit; FoundationDB guarantees strict serializability"},
	{DB: "spanner", Level: "serializable", Model: StrictSerializable, Mechanisms: mech(cr, me),
		Doc: "read-write transactions use two-phase locking, read-only transactions read a TrueTime snapshot; external consistency = strict serializability (Corbett et al. OSDI 2012)"},
}

// dbAliases maps normalized database names to profile DB names.
var dbAliases = map[string]string{
	"pg": "postgres", "postgresql": "postgres", "postgres": "postgres",
	"opengauss": "opengauss", "og": "opengauss", "gaussdb": "opengauss",
	"yugabyte": "yugabytedb", "yugabytedb": "yugabytedb", "yb": "yugabytedb", "ysql": "yugabytedb",
	"mysql": "mysql", "innodb": "mysql",
	"mariadb":   "mariadb",
	"sqlserver": "sqlserver", "mssql": "sqlserver", "sql-server": "sqlserver",
	"tidb": "tidb", "tidb-pessimistic": "tidb",
	"cockroachdb": "cockroachdb", "cockroach": "cockroachdb", "crdb": "cockroachdb",
	"sqlite": "sqlite", "sqlite3": "sqlite",
	"oracle":    "oracle",
	"oceanbase": "oceanbase", "ob": "oceanbase",
	"foundationdb": "foundationdb", "fdb": "foundationdb",
	"spanner": "spanner", "cloud-spanner": "spanner",
}

// levelAliases maps "db:level" spellings that are not a profile of their own
// to the profile that implements them.
var levelAliases = map[string]string{
	"postgres:read-uncommitted":          "postgres:read-committed", // PostgreSQL runs RU as RC
	"postgres:snapshot-isolation":        "postgres:repeatable-read",
	"opengauss:snapshot-isolation":       "opengauss:repeatable-read",
	"yugabytedb:snapshot-isolation":      "yugabytedb:repeatable-read",
	"sqlserver:snapshot":                 "sqlserver:snapshot-isolation",
	"sqlserver:rcsi":                     "sqlserver:read-committed-snapshot",
	"mariadb:repeatable-read-snapshot":   "mariadb:snapshot-isolation",
	"tidb-optimistic:repeatable-read":    "tidb:snapshot-isolation",
	"tidb-optimistic:snapshot-isolation": "tidb:snapshot-isolation",
	"oracle:snapshot-isolation":          "oracle:serializable",
	"oceanbase:snapshot-isolation":       "oceanbase:serializable",
	"cockroachdb:strict-serializable":    "cockroachdb:serializable",
	"foundationdb:strict-serializable":   "foundationdb:serializable",
	"spanner:strict-serializable":        "spanner:serializable",
	"sqlite:read-uncommitted":            "sqlite:serializable", // shared-cache RU aside, SQLite is serializable
}

var profileIndex map[string]int

func init() {
	profileIndex = map[string]int{}
	for i := range profiles {
		p := &profiles[i]
		p.Name = p.DB + ":" + p.Level
		profileIndex[p.Name] = i
	}
}

// LookupProfile finds a DBMS profile by "db:level". The database may be
// abbreviated (pg, mysql, mssql, crdb, fdb, ...) and the level may be any
// model alias (rr, rc, ser, si, ru) or the database's own spelling
// ("REPEATABLE READ", repeatable_read).
func LookupProfile(name string) (Profile, bool) {
	db, level, ok := strings.Cut(normalize(name), ":")
	if !ok || db == "" || level == "" {
		return Profile{}, false
	}
	optimistic := db == "tidb-optimistic"
	if d, ok := dbAliases[db]; ok {
		db = d
	} else if !optimistic {
		return Profile{}, false
	}
	candidates := []string{level}
	if m, ok := canon[level]; ok && m != level {
		candidates = append(candidates, m)
	}
	for _, l := range candidates {
		key := db + ":" + l
		if a, ok := levelAliases[key]; ok {
			key = a
		}
		if i, ok := profileIndex[key]; ok {
			return clone(profiles[i]), true
		}
	}
	return Profile{}, false
}

// Profiles returns every DBMS profile, sorted by name.
func Profiles() []Profile {
	out := make([]Profile, len(profiles))
	for i := range profiles {
		out[i] = clone(profiles[i])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func clone(p Profile) Profile {
	p.Mechanisms = append([]Mechanism(nil), p.Mechanisms...)
	return p
}

package record

import (
	"testing"

	_ "github.com/txray/txray/check/leopard"
	"github.com/txray/txray/record/db"
	"github.com/txray/txray/record/workload"
)

// Leopard (interval-based, mechanism-mirrored verification) on recorder
// histories: every operation carries its client interval, so the leopard
// checker verifies the mechanisms of the server's profile. A correct server
// must give no violation at any level (no false positives), and a profile
// with first-updater-wins must flag the lost updates that InnoDB repeatable
// read and PostgreSQL read committed allow.

// leopardLevels are the recorder levels and the DBMS profile each one is
// (MariaDB 10.11 in CI: innodb_snapshot_isolation is OFF, so its
// repeatable read is mariadb:repeatable-read).
var leopardLevels = []struct{ level, pg, maria string }{
	{db.ReadCommitted, "postgres:read-committed", "mariadb:read-committed"},
	{db.RepeatableRead, "postgres:repeatable-read", "mariadb:repeatable-read"},
	{db.Serializable, "postgres:serializable", "mariadb:serializable"},
}

func leopardNoFalsePositives(t *testing.T, url string, maria bool) {
	reachable(t, url)
	for _, l := range leopardLevels {
		prof := l.pg
		if maria {
			prof = l.maria
		}
		// predicate: range reads whose rows leopard identifies from the
		// predicate's region (check/leopard/region.go).
		wls := []string{"blindw-rw+", "predicate", "list-append"}
		if !maria {
			// PostgreSQL runs are slower to record (logical decoding
			// evidence; read committed runs take seconds): fewer
			// workloads per level keep the test short.
			wls = wls[:2]
			if l.level == db.ReadCommitted {
				wls = wls[:1]
			}
		}
		for _, wl := range wls {
			t.Run(l.level+"/"+wl, func(t *testing.T) {
				res := runRecorded(t, Config{DB: url, Level: l.level, Workload: wl, Clients: 6, Txns: 250,
					WL: workload.Config{Keys: 8, Ops: 6, ReadRatio: 0.5, MaxWritesPerKey: 32}})
				r := checkWith(t, res.History, "leopard", prof, nil)
				wantValid(t, r)
				t.Logf("uncertain ratio %v, reads checked %v of %v", r.Stats["uncertain_ratio"], r.Stats["reads_checked"], r.Stats["reads"])
				if n, _ := r.Stats["reads_checked"].(int64); n == 0 {
					t.Fatalf("no read was verified: %v", r.Stats)
				}
				if wl == "predicate" {
					if n, _ := r.Stats["pred_region_absent_rows"].(int64); n == 0 || r.Stats["pred_regions_undecided"].(int64) != 0 {
						t.Fatalf("predicate regions not identified: %v", r.Stats)
					}
				}
			})
		}
	}
}

func TestLeopardPostgresNoFalsePositives(t *testing.T) { leopardNoFalsePositives(t, pgURL(), false) }

func TestLeopardMariaDBNoFalsePositives(t *testing.T) { leopardNoFalsePositives(t, mysqlURL(), true) }

// TestLeopardMariaDBRepeatableReadLostUpdate: InnoDB repeatable read
// writes the newest row version without a conflict check, so concurrent
// read-modify-write transactions both commit (lost update). That is legal
// for mariadb:repeatable-read (consistent read + mutual exclusion) and a
// first-updater-wins violation under a profile that forbids it
// (mariadb:snapshot-isolation, innodb_snapshot_isolation=ON).
func TestLeopardMariaDBRepeatableReadLostUpdate(t *testing.T) {
	reachable(t, mysqlURL())
	res := runRecorded(t, Config{DB: mysqlURL(), Level: db.RepeatableRead, Workload: "rmw-register", Clients: 8, Txns: 300,
		WL: workload.Config{Keys: 4, Ops: 4, ReadRatio: 0.2, MaxWritesPerKey: 32}})
	wantValid(t, checkWith(t, res.History, "leopard", "mariadb:repeatable-read", nil))
	wantAnomaly(t, checkWith(t, res.History, "leopard", "mariadb:snapshot-isolation", nil), "fuw")
}

// TestLeopardPostgresReadCommittedLostUpdate: the same under PostgreSQL
// read committed (a blocked UPDATE proceeds on the newest version): legal
// for postgres:read-committed, a first-updater-wins violation under
// postgres:repeatable-read.
func TestLeopardPostgresReadCommittedLostUpdate(t *testing.T) {
	reachable(t, pgURL())
	res := runRecorded(t, Config{DB: pgURL(), Level: db.ReadCommitted, Workload: "rmw-register", Clients: 8, Txns: 300,
		WL: workload.Config{Keys: 4, Ops: 4, ReadRatio: 0.2, MaxWritesPerKey: 32}})
	wantValid(t, checkWith(t, res.History, "leopard", "postgres:read-committed", nil))
	wantAnomaly(t, checkWith(t, res.History, "leopard", "postgres:repeatable-read", nil), "fuw")
}

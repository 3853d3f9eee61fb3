package isodiff

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// synthetic builds an application of n classes over tables×cols columns
// (each class uses perClass of the tables),
// each class ops operations long, a fraction w of them writes; reads are
// range reads (unpinned) with probability pr, else keyed like the writes.
// The seed fixes the shape.
func synthetic(n, tables, perClass, cols, ops int, w, pr float64, seed uint64) *App {
	r := rand.New(rand.NewPCG(seed, 1))
	a := &App{}
	for i := 0; i < n; i++ {
		c := &Class{ID: fmt.Sprintf("c%03d", i), Instances: 1}
		rowOf := map[string]int{}
		mine := make([]int, perClass)
		for k := range mine {
			mine[k] = r.IntN(tables)
		}
		for j := 0; j < ops; j++ {
			t := fmt.Sprintf("t%d", mine[r.IntN(perClass)])
			col := fmt.Sprintf("c%d", r.IntN(cols))
			write := r.Float64() < w
			pinned := write || r.Float64() >= pr
			key := t
			if !pinned {
				key = fmt.Sprintf("%s/range%d", t, j)
			}
			row, ok := rowOf[key]
			if !ok {
				row = len(c.Rows)
				rowOf[key] = row
				c.Rows = append(c.Rows, RowVar{Table: t, Pinned: pinned})
			}
			verb := "SELECT " + col + " FROM " + t
			if write {
				verb = "UPDATE " + t + " SET " + col + " = ?"
			}
			c.Stmts = append(c.Stmts, ClassStmt{SQL: verb})
			c.Ops = append(c.Ops, Op{Table: t, Column: col, Write: write, Stmt: j, Row: row})
		}
		a.Classes = append(a.Classes, c)
	}
	return a
}

// paperLargest is a deterministic synthetic application of the size of
// the paper's largest case (§6: about 165 classes, 130,000 operation edges
// and 480,000 dangerous paths under SI; IsoDiff took 46 minutes on 20
// cores at k=10, ℓ=6): 165 classes of 26 operations over 18 tables of 4
// columns, 30% writes, 65% of reads range reads; 134,913 operation edges
// and 499,987 dangerous paths under SI (TestSyntheticShape prints them).
func paperLargest() *App { return synthetic(165, 18, 3, 4, 26, 0.3, 0.65, 42) }

// BenchmarkSyntheticSI runs one search round of paperLargest (every
// dangerous path; b.ReportMetric gives its counts);
// BenchmarkSyntheticSISetCover the whole analysis with set cover.
func BenchmarkSyntheticSI(b *testing.B) {
	a := paperLargest()
	for b.Loop() {
		m := prepare(a, Options{Level: SnapshotIsolation, K: 10, L: 6, CycleBudget: 50 * time.Millisecond}, map[string]bool{})
		_, st := m.search()
		b.ReportMetric(float64(st.OpEdges), "op-edges")
		b.ReportMetric(float64(st.DangerousPaths), "dangerous-paths")
		b.ReportMetric(float64(st.DeltaCycles), "Δ-cycles")
		b.ReportMetric(float64(st.TxnCycles), "txn-cycles")
	}
}

func BenchmarkSyntheticSISetCover(b *testing.B) {
	a := paperLargest()
	for b.Loop() {
		r := Analyze(a, Options{Level: SnapshotIsolation, K: 10, L: 6})
		searched := 0
		for _, st := range r.Rounds {
			searched += st.Searched
		}
		b.ReportMetric(float64(len(r.Targets)), "targets")
		b.ReportMetric(float64(len(r.Rounds)), "rounds")
		b.ReportMetric(float64(r.Stats.DangerousPaths), "dangerous-paths")
		b.ReportMetric(float64(r.Stats.DeltaCycles), "Δ-cycles")
		b.ReportMetric(float64(searched), "paths-searched")
		if len(r.Residual) > 0 || r.Incomplete {
			b.Fatalf("set cover incomplete: residual %v", r.Residual)
		}
	}
}

// BenchmarkTPCC: the TPC-C trace from PostgreSQL, read, parsed, grouped and
// analysed at read committed with the paper's hints.
func BenchmarkTPCC(b *testing.B) {
	if _, err := os.Stat("testdata/tpcc-postgres.trace.gz"); err != nil {
		b.Skip(err)
	}
	h := paperHints(b)
	for b.Loop() {
		a := loadTPCC(b, "tpcc-postgres.trace.gz")
		for _, lv := range []string{ReadCommitted, SnapshotIsolation} {
			Analyze(a, Options{Level: lv, Hints: h})
		}
	}
}

func TestSyntheticShape(t *testing.T) {
	if testing.Short() {
		t.Skip("sizing helper")
	}
	if os.Getenv("ISODIFF_SHAPE") == "" {
		t.Skip("set ISODIFF_SHAPE=1 to print the synthetic application's size")
	}
	a := paperLargest()
	m := prepare(a, Options{Level: SnapshotIsolation}, map[string]bool{})
	t.Logf("classes %d, op edges %d, dangerous paths %d", m.n(), m.nOpEdge, len(m.dangerousPaths()))
}

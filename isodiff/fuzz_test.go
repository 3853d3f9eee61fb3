package isodiff

import (
	"strings"
	"testing"
)

// FuzzReadTrace: the trace readers and the statement parsers never panic,
// whatever the input; bad input is an error or an unparsable statement.
func FuzzReadTrace(f *testing.F) {
	f.Add(pgLog, 0)
	f.Add(myLog, 1)
	f.Add("s\tBEGIN\ns\tUPDATE t SET a = a + 1 WHERE k = $1\t[1]\ns\tCOMMIT\n", 2)
	f.Add("s\tSELECT a FROM t WHERE k IN (SELECT k FROM u) FOR UPDATE\n", 2)
	f.Add("s\tINSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = excluded.a + 1\n", 2)
	f.Add("s\tWITH x AS (SELECT a FROM t) UPDATE u SET b = 1 FROM x WHERE u.a = x.a\n", 2)
	// Recorder ids, early-exit loop iterations, a unique-ID insert.
	f.Add("s\t-- txn: c1-0\ns\tBEGIN\ns\tSELECT n FROM q WHERE d = 1\ns\tSELECT n FROM q WHERE d = 2\ns\tDELETE FROM q WHERE d = 2 AND n = 5\n"+
		"s\tSELECT n FROM q WHERE d = 3\ns\tCOMMIT\nt\t-- txn: c2-0\nt\tINSERT INTO q (d, n) VALUES (2, 6)\nu\tINSERT INTO q (d, n) VALUES (3, 7)\n", 2)
	f.Fuzz(func(t *testing.T, text string, which int) {
		formats := []string{FormatPG, FormatMySQL, FormatPlain, FormatAuto}
		format := formats[(which%4+4)%4]
		es, got, err := ReadTrace(strings.NewReader(text), "fuzz", format)
		if err != nil {
			return
		}
		for _, d := range []string{DialectPostgres, DialectMySQL, DialectAuto} {
			b := NewBuilder(d)
			b.Add("fuzz", got, es)
			a := b.Build()
			if len(a.Classes) > 0 && len(a.Classes) <= 4 {
				Analyze(a, Options{Level: ReadCommitted, K: 2, L: 2})
			}
		}
	})
}

// FuzzParse: both SQL front ends turn any statement into accesses or an
// error, never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"SELECT a FROM t WHERE k = 1", "UPDATE t SET a = ? WHERE k = ?", "DELETE FROM t USING u WHERE t.a = u.a",
		"SELECT * FROM (SELECT a FROM t) AS x JOIN u USING (a)", "INSERT INTO t SELECT * FROM u", "SELECT 1 UNION SELECT a FROM t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		_, _ = parsePostgres(sql, []string{"1", "'x'"})
		_, _ = parseMySQL(sql, []string{"1"})
	})
}

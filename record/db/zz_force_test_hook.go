package db

import "database/sql"

// ForceMultiStmt (scratch, not committed) switches a recording MariaDB
// session to the COMMIT; SELECT @@last_gtid form.
func ForceMultiStmt(c Conn) {
	sc := c.(*sqlConn)
	sc.afterCommit = nil
	sc.commitQuery = "COMMIT; SELECT @@last_gtid"
	sc.commitScan = func(rows *sql.Rows, ev *TxnEvidence) error {
		if !rows.Next() {
			return sql.ErrNoRows
		}
		var g sql.NullString
		rows.Scan(&g)
		setGTID(ev, g.String)
		return nil
	}
}

package workload

import "github.com/txray/txray/record/db"

// scanRows scans each row of rows into dest and then calls each (when not
// nil), so each sees the row's values in dest. It closes rows and returns
// the number of rows scanned and the first error: Scan's, else rows.Err()
// (taken after Close, as pgx requires).
func scanRows(rows db.Rows, each func(), dest ...any) (int, error) {
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return n, err
		}
		n++
		if each != nil {
			each()
		}
	}
	rows.Close()
	return n, rows.Err()
}

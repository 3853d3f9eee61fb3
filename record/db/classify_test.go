package db

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestClassify: server-reported errors abort; a lost connection aborts
// before COMMIT and makes the outcome unknown at COMMIT.
func TestClassify(t *testing.T) {
	pg := (&pgConn{}).Classify
	my := classifyMySQL
	wrap := func(err error) error { return fmt.Errorf("statement: %w", err) }
	for _, tc := range []struct {
		name     string
		f        func(error, bool) (Outcome, Class)
		err      error
		atCommit bool
		out      Outcome
		class    Class
	}{
		{"pg serialization failure", pg, wrap(&pgconn.PgError{Code: "40001"}), true, Aborted, ClassSerialization},
		{"pg deadlock", pg, &pgconn.PgError{Code: "40P01"}, false, Aborted, ClassDeadlock},
		{"pg unique violation", pg, &pgconn.PgError{Code: "23505"}, false, Aborted, ClassOther},
		{"pg admin shutdown at commit", pg, &pgconn.PgError{Code: "57P01"}, true, Unknown, ClassConnection},
		{"pg admin shutdown before commit", pg, &pgconn.PgError{Code: "57P01"}, false, Aborted, ClassConnection},
		{"pg EOF at commit", pg, wrap(io.ErrUnexpectedEOF), true, Unknown, ClassConnection},
		{"pg EOF before commit", pg, io.ErrUnexpectedEOF, false, Aborted, ClassConnection},
		{"pg timeout at commit", pg, context.DeadlineExceeded, true, Unknown, ClassConnection},
		{"pg commit answered rollback", pg, errRolledBack, true, Aborted, ClassOther},
		{"mysql deadlock", my, &mysql.MySQLError{Number: 1213}, false, Aborted, ClassDeadlock},
		{"mysql lock wait timeout", my, &mysql.MySQLError{Number: 1205}, false, Aborted, ClassLockTimeout},
		{"mariadb record changed", my, &mysql.MySQLError{Number: 1020}, true, Aborted, ClassSerialization},
		{"mysql bad conn at commit", my, mysql.ErrInvalidConn, true, Unknown, ClassConnection},
		{"mysql bad conn before commit", my, errors.New("broken pipe"), false, Aborted, ClassConnection},
		{"sqlite timeout at commit", classifySQLite, context.DeadlineExceeded, true, Unknown, ClassConnection},
		{"sqlite other", classifySQLite, errors.New("no such table"), false, Aborted, ClassOther},
	} {
		out, class := tc.f(tc.err, tc.atCommit)
		if out != tc.out || class != tc.class {
			t.Errorf("%s: got %v/%v, want %v/%v", tc.name, out, class, tc.out, tc.class)
		}
	}
}

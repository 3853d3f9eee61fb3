package db

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// TraceSQL wraps d so that every statement its client sessions run is
// written to w in the plain SQL trace format of txray analyze
// (docs/analyze.md): "SESSION<TAB>SQL<TAB>PARAMS-JSON" a line, with BEGIN,
// COMMIT (only when the server acknowledged it) and ROLLBACK lines marking
// transactions. Setup statements (DDL, loading) are not traced. The trace
// is flushed when the returned DB is closed.
func TraceSQL(d DB, w io.Writer) DB {
	return &tracedDB{DB: d, w: bufio.NewWriterSize(w, 1<<16)}
}

type tracedDB struct {
	DB
	mu   sync.Mutex
	w    *bufio.Writer
	err  error
	next atomic.Int64
}

func (t *tracedDB) line(sess, sql string, args []any) {
	sql = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(sql)
	var ps []byte
	if len(args) > 0 {
		vals := make([]any, len(args))
		for i, a := range args {
			switch v := a.(type) {
			case nil, string, bool, int, int32, int64, float64:
				vals[i] = v
			case []byte:
				vals[i] = string(v)
			default:
				vals[i] = fmt.Sprint(v)
			}
		}
		ps, _ = json.Marshal(vals)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	_, t.err = fmt.Fprintf(t.w, "%s\t%s", sess, sql)
	if t.err == nil && ps != nil {
		_, t.err = fmt.Fprintf(t.w, "\t%s", ps)
	}
	if t.err == nil {
		t.err = t.w.WriteByte('\n')
	}
}

// HasCommitOrder and Settings forward to the traced adapter, so tracing
// does not hide its commit order (MariaDB GTIDs, the SQLite counter) or
// its session settings from the history header.
func (t *tracedDB) HasCommitOrder() bool {
	g, ok := t.DB.(interface{ HasCommitOrder() bool })
	return ok && g.HasCommitOrder()
}

func (t *tracedDB) Settings() map[string]string {
	if st, ok := t.DB.(interface{ Settings() map[string]string }); ok {
		return st.Settings()
	}
	return nil
}

func (t *tracedDB) Conn(ctx context.Context) (Conn, error) {
	c, err := t.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &tracedConn{Conn: c, t: t, sess: fmt.Sprintf("s%d", t.next.Add(1))}, nil
}

// Close flushes the trace and closes the database; a trace write error is
// returned here.
func (t *tracedDB) Close() error {
	t.mu.Lock()
	if t.err == nil {
		t.err = t.w.Flush()
	}
	werr := t.err
	t.mu.Unlock()
	if err := t.DB.Close(); err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("--sql-trace: %w", werr)
	}
	return nil
}

type tracedConn struct {
	Conn
	t    *tracedDB
	sess string
}

// TxnTracer is implemented by the sessions of a DB wrapped by TraceSQL:
// TraceTxn names the session's next transaction in the trace with a
// "-- txn: ID" line (the history's transaction id), so that txray analyze
// can map history transactions to trace transactions and their classes.
type TxnTracer interface {
	TraceTxn(id string)
}

func (c *tracedConn) TraceTxn(id string) { c.t.line(c.sess, "-- txn: "+id, nil) }

func (c *tracedConn) Begin(ctx context.Context) error {
	c.t.line(c.sess, "BEGIN", nil)
	return c.Conn.Begin(ctx)
}

func (c *tracedConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	c.t.line(c.sess, q, args)
	return c.Conn.Exec(ctx, q, args...)
}

func (c *tracedConn) Query(ctx context.Context, q string, args ...any) (Rows, error) {
	c.t.line(c.sess, q, args)
	return c.Conn.Query(ctx, q, args...)
}

func (c *tracedConn) Commit(ctx context.Context) error {
	err := c.Conn.Commit(ctx)
	if err == nil {
		c.t.line(c.sess, "COMMIT", nil)
	} else {
		c.t.line(c.sess, "ROLLBACK", nil)
	}
	return err
}

func (c *tracedConn) Rollback(ctx context.Context) error {
	c.t.line(c.sess, "ROLLBACK", nil)
	return c.Conn.Rollback(ctx)
}

package db

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TraceSQL writes what the sessions run, with parameters, and marks
// commits only when the server acknowledged them.
func TestTraceSQL(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, "", Options{Level: Serializable})
	if err != nil {
		t.Skipf("embedded SQLite unavailable: %v", err)
	}
	if err := d.Setup(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	td := TraceSQL(d, &buf)
	c, err := td.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO t (k, v) VALUES (?, ?)", int64(1), "a\tb"); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := td.Close(); err != nil {
		t.Fatal(err)
	}
	want := "s1\tBEGIN\ns1\tINSERT INTO t (k, v) VALUES (?, ?)\t[1,\"a\\tb\"]\ns1\tCOMMIT\ns1\tBEGIN\ns1\tROLLBACK\n"
	if got := buf.String(); got != want {
		t.Errorf("trace:\n%q\nwant\n%q", got, want)
	}
	if strings.Count(buf.String(), "\n") != 5 {
		t.Errorf("one statement a line")
	}
}

package db

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/txray/txray/internal/testenv"
)

// TestRedactEveryDSNForm: every way a database address can carry a secret
// comes out of Redact with the secret masked and the rest readable.
func TestRedactEveryDSNForm(t *testing.T) {
	for _, tc := range []struct {
		name, dsn, secret, keep string
	}{
		{"url password", "postgres://u:s3cret@h:5432/db", "s3cret", "postgres://u:***@h:5432/db"},
		{"url password percent-encoded", "postgres://u:s3%40cret@h/db", "s3%40cret", "postgres://u:***@h/db"},
		{"url password with raw @", "postgres://u:s3@cret@h/db", "s3@cret", "@h/db"},
		{"url password, malformed port", "postgres://u:s3cret@h:port/db", "s3cret", "postgres://u:***@h:port/db"},
		{"url password, bad escape", "postgres://u:s3cret@h%zz/db", "s3cret", "postgres://u:***@"},
		{"query password", "postgres://u@h/db?sslmode=disable&password=s3cret", "s3cret", "sslmode=disable&password=***"},
		{"query sslpassword", "postgres://u@h/db?sslpassword=s3cret", "s3cret", "sslpassword=***"},
		{"query PASSWORD upper case", "postgres://u@h/db?PASSWORD=s3cret&x=1", "s3cret", "&x=1"},
		{"key=value", "host=h user=u password=s3cret dbname=db", "s3cret", "password=*** dbname=db"},
		{"key=value quoted", "host=h password='s3 cr\\'et' dbname=db", "s3 cr", "dbname=db"},
		{"key=value spaced", "host=h password = s3cret dbname=db", "s3cret", "dbname=db"},
		{"mysql driver dsn", "root:s3cret@tcp(127.0.0.1:3306)/test", "s3cret", "root:***@tcp(127.0.0.1:3306)/test"},
		{"mysql url", "mysql://root:s3cret@127.0.0.1:3306/test", "s3cret", "mysql://root:***@127.0.0.1:3306/test"},
		{"unknown scheme", "oracle://scott:s3cret@h:1521/orcl", "s3cret", "oracle://scott:***@h:1521/orcl"},
		{"opaque unknown scheme", "oracle:scott:s3cret@h", "s3cret", "scott:***@h"},
		{"semicolon form", "Server=h;User Id=u;Password=s3cret;Database=db", "s3cret", "Database=db"},
		{"token", "cockroach://u@h/db?token=s3cret", "s3cret", "token=***"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Redact(tc.dsn)
			if strings.Contains(got, tc.secret) {
				t.Errorf("Redact(%q) = %q: still shows %q", tc.dsn, got, tc.secret)
			}
			if !strings.Contains(got, tc.keep) {
				t.Errorf("Redact(%q) = %q: want it to keep %q", tc.dsn, got, tc.keep)
			}
		})
	}
	for _, clean := range []string{"postgres://u@h:5432/db", "mysql://root@127.0.0.1:3306/test", "sqlite", "sqlite:///tmp/x.db", ""} {
		if got := Redact(clean); got != clean {
			t.Errorf("Redact(%q) = %q: changed an address with no secret", clean, got)
		}
	}
}

// TestScrubErrorKeepsChain: scrubbing a message keeps errors.Is working.
func TestScrubErrorKeepsChain(t *testing.T) {
	err := ScrubError(errors.Join(context.DeadlineExceeded, errors.New("dial postgres://u:s3cret@h")), "postgres://u:s3cret@h")
	if strings.Contains(err.Error(), "s3cret") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ScrubError = %v (Is deadline: %v)", err, errors.Is(err, context.DeadlineExceeded))
	}
}

// TestOpenErrorsNeverShowSecrets: Open fails on each of these addresses
// (malformed, unknown scheme, nothing listening) and its message never
// shows the password.
func TestOpenErrorsNeverShowSecrets(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens here now: connection refused
	for _, dsn := range []string{
		"postgres://u:s3cret@h:port/db",
		"postgres://u:s3cret@h%zz/db",
		"postgres://u:s3cret@" + closed + "/db",
		"postgres://u@" + closed + "/db?password=s3cret",
		"postgres://u@" + closed + "/db?sslmode=bogus&password=s3cret",
		"host=127.0.0.1 port=1 user=u password=s3cret",
		"root:s3cret@tcp(" + closed + ")/test",
		"mysql://root:s3cret@" + closed + "/test",
		"mysql://root:s3cret@h:port/test",
		"oracle://scott:s3cret@h/orcl",
		"oracle:scott:s3cret@h",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, err := Open(ctx, dsn, Options{ConnectTimeout: 2 * time.Second})
		cancel()
		if err == nil {
			d.Close()
			t.Errorf("Open(%q) succeeded", Redact(dsn))
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q) error shows the password: %v", Redact(dsn), err)
		}
	}
}

// silentServer accepts TCP connections and never answers (nor closes
// them until the test ends).
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestConnectTimeoutSilentServer: a server that accepts the connection and
// never answers ends Open with a timeout error, for PostgreSQL and MySQL,
// instead of hanging.
func TestConnectTimeoutSilentServer(t *testing.T) {
	addr := silentServer(t)
	for _, dsn := range []string{"postgres://u:s3cret@" + addr + "/db", "mysql://root:s3cret@" + addr + "/test"} {
		start := time.Now()
		// The outer context is only a safety net for the test itself.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		d, err := Open(ctx, dsn, Options{ConnectTimeout: 300 * time.Millisecond})
		safety := ctx.Err()
		cancel()
		if err == nil {
			d.Close()
			t.Fatalf("Open(%s) against a silent server succeeded", Redact(dsn))
		}
		if safety != nil {
			t.Fatalf("Open(%s) was ended by the test's safety net after %v, not by the connect timeout: %v", Redact(dsn), time.Since(start), err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), "timeout") && !strings.Contains(err.Error(), "deadline") {
			t.Errorf("Open(%s) error does not say it timed out: %v", Redact(dsn), err)
		}
	}
}

// TestStatementTimeoutEndsLongStatement: with a statement timeout, a
// statement the server does not answer in time ends with an error that
// Classify treats as a lost session (unknown at COMMIT), on the real
// servers.
func TestStatementTimeoutEndsLongStatement(t *testing.T) {
	for _, tc := range []struct{ name, url, sleep string }{
		{"postgres", envOr("TXRAY_PG_URL", "postgres://postgres@127.0.0.1:5432/test"), "SELECT pg_sleep(20)"},
		{"mysql", envOr("TXRAY_MYSQL_URL", "mysql://root@127.0.0.1:3306/test"), "SELECT SLEEP(20)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			d, err := Open(ctx, tc.url, Options{ConnectTimeout: 5 * time.Second, StatementTimeout: 300 * time.Millisecond})
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) {
					testenv.Missing(t, "%s not reachable at %s (%v)", tc.name, tc.url, err)
				}
				t.Fatal(err)
			}
			defer d.Close()
			c, err := d.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			_, err = c.Exec(ctx, tc.sleep)
			if err == nil {
				t.Fatalf("%s finished within a 300ms statement timeout", tc.sleep)
			}
			if ctx.Err() != nil {
				t.Fatalf("the statement was ended by the test's safety net, not the statement timeout: %v", err)
			}
			if out, class := c.Classify(err, true); out != Unknown || class != ClassConnection {
				t.Errorf("a timed-out COMMIT-time statement classifies as %v/%v, want unknown/connection (%v)", out, class, err)
			}
		})
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// FuzzRedact: whatever the password, no form of address that carries it
// shows it after Redact (URL userinfo for known and unknown schemes,
// ?password=, MySQL driver DSNs, key=value DSNs), and Redact never panics.
func FuzzRedact(f *testing.F) {
	f.Add("s3cret", "u", "h:5432")
	f.Add("p@ss:w/rd?#", "root", "127.0.0.1:3306")
	f.Add("x", "x", "x")
	f.Fuzz(func(t *testing.T, pw, user, host string) {
		_ = Redact(pw + user + host) // arbitrary input: must not panic
		if pw == "" || strings.ContainsAny(pw, "*") {
			return // the mask itself is made of '*'
		}
		if strings.Contains(host, "@") {
			// The address's own '@' then ends the userinfo later than the
			// test's: its password is pw plus part of host ("0@" for host
			// "@"), which is what must not show.
			return
		}
		forms := func(pw string) []string {
			fs := []string{
				"postgres://" + url.UserPassword(user, pw).String() + "@" + host + "/db",
				"oracle://" + url.UserPassword(user, pw).String() + "@" + host + "/db",
				"postgres://" + url.PathEscape(user) + "@" + host + "/db?password=" + url.QueryEscape(pw),
			}
			if !strings.ContainsAny(user, ":@/") {
				fs = append(fs, user+":"+pw+"@tcp("+host+")/test")
			}
			if !strings.ContainsAny(pw, " \t\n\r\v\f'\"&;\\") {
				fs = append(fs, "host="+url.PathEscape(host)+" password="+pw+" dbname=db")
			}
			return fs
		}
		// The password may also be part of what is not secret (user "0",
		// password "0"): an output that still contains it is a leak only if
		// it differs from the output for another password.
		// (The key=value form comes last, so mine[i] and others[i] are the
		// same form even when pw's characters leave it out of mine.)
		const other = "Zz9-other-password"
		mine, others := forms(pw), forms(other)
		for i, dsn := range mine {
			if got := Redact(dsn); strings.Contains(got, pw) && got != Redact(others[i]) {
				t.Fatalf("Redact(%q) = %q shows the password %q", dsn, got, pw)
			}
		}
	})
}

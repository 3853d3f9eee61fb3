package db

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/txray/txray/internal/testenv"
)

// okPacket builds an OK packet payload with CLIENT_SESSION_TRACK: status
// flags, info, and (when state is non-nil) the session state changes.
func okPacket(status uint16, info string, state []byte) []byte {
	p := []byte{0x00, 0x01, 0x00, byte(status), byte(status >> 8), 0x00, 0x00}
	p = append(p, byte(len(info)))
	p = append(p, info...)
	if state != nil {
		p = append(p, byte(len(state)))
		p = append(p, state...)
	}
	return p
}

// sysVar is one SESSION_TRACK_SYSTEM_VARIABLES entry.
func sysVar(name, value string) []byte {
	data := append([]byte{byte(len(name))}, name...)
	data = append(append(data, byte(len(value))), value...)
	return append([]byte{0x00, byte(len(data))}, data...)
}

func TestOKPacketLastGTID(t *testing.T) {
	const changed = 0x4000 | 0x0002 // SERVER_SESSION_STATE_CHANGED | autocommit
	schema := []byte{0x01, 0x05, 0x04, 't', 'e', 's', 't'}
	for _, tc := range []struct {
		name string
		p    []byte
		want string
	}{
		{"last_gtid alone", okPacket(changed, "", sysVar("last_gtid", "0-1-42")), "0-1-42"},
		{"after another variable and the schema", okPacket(changed, "x", append(append(sysVar("autocommit", "ON"), schema...), sysVar("last_gtid", "0-1-7")...)), "0-1-7"},
		{"state unchanged: read-only transaction", okPacket(0x0002, "", nil), ""},
		{"state changed, other variables only", okPacket(changed, "", sysVar("autocommit", "OFF")), ""},
		{"error packet", []byte{0xff, 0x15, 0x04, '#', '4', '0', '0', '0', '1'}, ""},
		{"empty", nil, ""},
		{"truncated state", okPacket(changed, "", sysVar("last_gtid", "0-1-42"))[:14], ""},
		{"state length past the end", append(okPacket(changed, "", nil), 0x40, 0x00), ""},
		{"8-byte affected rows", append([]byte{0x00, 0xfe, 1, 0, 0, 0, 0, 0, 0, 0}, okPacket(changed, "", sysVar("last_gtid", "1-2-3"))[2:]...), "1-2-3"},
		{"NULL where an integer belongs", []byte{0x00, 0xfb, 0x00, 0x02, 0x40, 0, 0}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := okLastGTID(tc.p); got != tc.want {
				t.Fatalf("okLastGTID(% x) = %q, want %q", tc.p, got, tc.want)
			}
		})
	}
}

func FuzzOKLastGTID(f *testing.F) {
	f.Add(okPacket(0x4002, "", sysVar("last_gtid", "0-1-42")))
	f.Add(okPacket(0x0002, "", nil))
	f.Add([]byte{0x00, 0xfc, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		_ = okLastGTID(p)
	})
}

// pipeConn is a net.Conn whose writes are kept and whose reads come from a
// fixed answer.
type pipeConn struct {
	net.Conn
	wrote bytes.Buffer
	ans   *bytes.Reader
}

func (c *pipeConn) Write(b []byte) (int, error) { return c.wrote.Write(b) }
func (c *pipeConn) Read(b []byte) (int, error)  { return c.ans.Read(b) }

// TestGTIDConnHandshakeAndCommit: the handshake response (the client's
// first packet) gets CLIENT_SESSION_TRACK and nothing else changes; the
// answer to COMMIT, read in pieces, yields its last_gtid; answers to other
// statements are not parsed.
func TestGTIDConnHandshakeAndCommit(t *testing.T) {
	ok := okPacket(0x4002, "", sysVar("last_gtid", "0-1-99"))
	ans := append([]byte{byte(len(ok)), 0, 0, 1}, ok...)
	pc := &pipeConn{ans: bytes.NewReader(append(append([]byte(nil), ans...), ans...))}
	g := &gtidConn{Conn: pc}
	hs := []byte{0x20, 0, 0, 1, 0x0d, 0xa6, 0x03, 0x00, 0xff}
	if _, err := g.Write(hs); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), hs...)
	want[6] |= 0x80
	if !bytes.Equal(pc.wrote.Bytes(), want) || hs[6] != 0x03 {
		t.Fatalf("handshake written % x, want % x (caller's buffer % x unchanged)", pc.wrote.Bytes(), want, hs)
	}
	// An answer to another statement is not taken for a COMMIT's.
	g.Write([]byte{11, 0, 0, 0, 0x03, 'S', 'E', 'L', 'E', 'C', 'T'})
	buf := make([]byte, len(ans))
	g.Read(buf)
	if got := g.takeGTID(); got != "" {
		t.Fatalf("GTID %q from a non-COMMIT answer", got)
	}
	g.Write([]byte{7, 0, 0, 0, 0x03, 'C', 'O', 'M', 'M', 'I', 'T'})
	for _, n := range []int{3, 5, len(ans) - 8} {
		g.Read(buf[:n])
	}
	if got := g.takeGTID(); got != "0-1-99" {
		t.Fatalf("GTID %q, want 0-1-99", got)
	}
	if got := g.takeGTID(); got != "" {
		t.Fatalf("GTID %q taken twice", got)
	}
}

// TestMariaDBGTIDFromOKPacket (live, TXRAY_MYSQL_URL or the default local
// server): a recording MariaDB session with the binary log on gets each
// writing commit's GTID from COMMIT's OK packet, equal to what
// SELECT @@last_gtid says afterwards, without a second round trip; a
// read-only commit gets none.
func TestMariaDBGTIDFromOKPacket(t *testing.T) {
	url := os.Getenv("TXRAY_MYSQL_URL")
	if url == "" {
		url = "mysql://root@127.0.0.1:3306/test"
	}
	ctx := context.Background()
	d, err := Open(ctx, url, Options{Level: ReadCommitted, Record: true})
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) {
			testenv.Missing(t, "MariaDB not reachable at %s (%v)", url, err)
		}
		t.Fatal(err)
	}
	defer d.Close()
	if d.Name() != "mariadb" || !d.(*myDB).gtid {
		testenv.Missing(t, "%s is not MariaDB with the binary log on", url)
	}
	if err := d.Setup(ctx, "CREATE TABLE IF NOT EXISTS txray_gtid_probe (k BIGINT PRIMARY KEY, v BIGINT)"); err != nil {
		t.Fatal(err)
	}
	c, err := d.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc := c.(*sqlConn)
	if sc.afterCommit == nil {
		t.Fatal("session tracking not in use (fell back to COMMIT; SELECT @@last_gtid)")
	}
	for i := 0; i < 10; i++ {
		if err := c.Begin(ctx); err != nil {
			t.Fatal(err)
		}
		write := i%3 != 2
		if write {
			if _, err := c.Exec(ctx, "INSERT INTO txray_gtid_probe (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)", i%4, i); err != nil {
				t.Fatal(err)
			}
		} else if rows, err := c.Query(ctx, "SELECT v FROM txray_gtid_probe WHERE k = 0"); err != nil {
			t.Fatal(err)
		} else {
			rows.Close()
		}
		if err := c.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		ev := c.Evidence()
		var last string
		if err := sc.c.QueryRowContext(ctx, "SELECT @@last_gtid").Scan(&last); err != nil {
			t.Fatal(err)
		}
		switch {
		case write && (ev.GTID != last || !ev.CommitTS.Set):
			t.Fatalf("txn %d: GTID %q (commit ts %v), server says %q", i, ev.GTID, ev.CommitTS, last)
		case !write && ev.GTID != "":
			t.Fatalf("read-only txn %d got GTID %q", i, ev.GTID)
		}
	}
	if sc.gtidAsked != 0 {
		t.Fatalf("%d commits needed a second round trip for their GTID", sc.gtidAsked)
	}
	_ = d.Setup(ctx, "DROP TABLE IF EXISTS txray_gtid_probe")
}

package db

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// The WAL commit stream (pgWALStream) reads the server's WAL files
// themselves on a dedicated ordinary session (pg_read_binary_file of
// pg_wal/, from where the last Poll stopped to the flush position), with
// a temporary physical slot on that session keeping the WAL not read yet,
// and takes each transaction's commit record from them: the xid in the
// record's header, the commit time in its body, and the LSN at which the
// record ends (what test_decoding reports for COMMIT, so commit_ts values
// are the same). The server only copies bytes it already wrote; nothing is
// decoded there (the logical slot's backend decoded every change again at
// every read). An ordinary session, not a replication connection: on
// PostgreSQL 15 every WAL flush wakes every walsender, idle or not, and an
// idle walsender beside the overhead benchmark's workload used 16 µs of
// CPU per transaction on those wake-ups (docs/benchmarks.md, "pgcap").
//
// Same evidence as the logical slot: commit records in WAL order (each
// record's position is its place in the WAL), transactions of other
// databases left out where the record names its database (every commit
// record does at wal_level logical; test_decoding drops the same ones),
// and prepared transactions' COMMIT PREPARED reported under the prepared
// xid. Aborts and transactions without an xid write no commit record.
// Needs the privileges to create a replication slot (REPLICATION) and to
// read server files (superuser or pg_read_server_files).

const (
	pgEpochUnixMicro = 946684800 * 1000000 // 2000-01-01 in Unix µs
	walRecHdr        = 24                  // sizeof(XLogRecord)
	walShortPageHdr  = 24                  // MAXALIGN(sizeof(XLogPageHeaderData))
	walLongPageHdr   = 40                  // MAXALIGN(sizeof(XLogLongPageHeaderData))
	xlpLongHeader    = 0x0002
	rmXLOG           = 0 // RM_XLOG_ID
	xlogSwitch       = 0x40
	xlrInfoMask      = 0x0F
	rmXact           = 1 // RM_XACT_ID
	xactOpMask       = 0x70
	xactCommit       = 0x00
	xactCommitPrep   = 0x30
	xactHasInfo      = 0x80
	xinfoDBInfo      = 1 << 0
	xinfoSubxacts    = 1 << 1
	xinfoRelfiles    = 1 << 2
	xinfoInvals      = 1 << 3
	xinfoTwoPhase    = 1 << 4
	xinfoDropStats   = 1 << 8 // PostgreSQL 15+
)

type pgWALStream struct {
	c    *pgx.Conn
	slot string
	tli  uint32
	db   uint32 // the run's database OID
	ver  int    // server_version_num
	blck uint64 // wal_block_size
	seg  uint64 // wal_segment_size
	// buf holds the WAL read and not yet parsed, from LSN bufLSN; next is
	// the LSN of the next record to parse, synced false until the first
	// record boundary after the start is found.
	buf    []byte
	bufLSN uint64
	next   uint64
	synced bool
	rec    []byte // scratch for a commit record
	// released is how far the slot was advanced.
	released uint64
}

// openWALStream opens the session, creates the temporary physical slot
// (reserving WAL from now on until the slot advances), and positions the
// stream at the page holding the server's flush position, so every commit
// record written after it returns is read.
func (p *pgDB) openWALStream(ctx context.Context) (*pgWALStream, error) {
	c, err := pgx.ConnectConfig(ctx, p.cfg.Copy())
	if err != nil {
		return nil, err
	}
	s := &pgWALStream{c: c}
	fail := func(err error) (*pgWALStream, error) {
		c.Close(context.Background())
		return nil, err
	}
	sctx, cancel := p.o.stmt(ctx)
	defer cancel()
	var n [4]string
	if err := c.QueryRow(sctx, `SELECT (SELECT oid FROM pg_database WHERE datname = current_database())::text,
		current_setting('server_version_num'), current_setting('wal_block_size'),
		(SELECT setting FROM pg_settings WHERE name = 'wal_segment_size')`).Scan(&n[0], &n[1], &n[2], &n[3]); err != nil {
		return fail(err)
	}
	var v [4]uint64
	for i := range n {
		if v[i], err = strconv.ParseUint(n[i], 10, 64); err != nil {
			return fail(fmt.Errorf("settings: %q: %v", n[i], err))
		}
	}
	s.db, s.ver, s.blck, s.seg = uint32(v[0]), int(v[1]), v[2], v[3]
	// The record and page layouts and the commit record's body read here
	// are those of PostgreSQL 10 to 17.
	if s.ver < 100000 || s.ver >= 180000 {
		return fail(fmt.Errorf("server version %d: WAL layout not known to txray", s.ver))
	}
	if s.blck == 0 || s.blck&(s.blck-1) != 0 || s.seg == 0 || s.seg%s.blck != 0 || 1<<32%s.seg != 0 {
		return fail(fmt.Errorf("wal_block_size %d, wal_segment_size %d", s.blck, s.seg))
	}
	// named like the logical slot, so tests find both by the pid
	s.slot = fmt.Sprintf("txray_%d_w%d", os.Getpid(), rand.Uint32())
	if _, err := c.Exec(sctx, "SELECT pg_create_physical_replication_slot($1, true, true)", s.slot); err != nil {
		return fail(err)
	}
	flush, err := s.flush(sctx)
	if err != nil {
		return fail(err)
	}
	s.bufLSN = flush &^ (s.blck - 1)
	s.next, s.released = s.bufLSN, s.bufLSN
	// A read of nothing: a missing privilege shows here, and
	// CommitStream falls back to the logical slot.
	if _, err := c.Exec(sctx, "SELECT pg_read_binary_file($1, 0, 0)", s.file(s.bufLSN/s.seg)); err != nil {
		return fail(err)
	}
	return s, nil
}

// flush returns the server's WAL flush position and keeps its timeline.
func (s *pgWALStream) flush(ctx context.Context) (uint64, error) {
	var l, f string
	if err := s.c.QueryRow(ctx, "SELECT f::text, pg_walfile_name(f) FROM pg_current_wal_flush_lsn() f").Scan(&l, &f); err != nil {
		return 0, err
	}
	if len(f) != 24 {
		return 0, fmt.Errorf("WAL file name %q", f)
	}
	t, err := strconv.ParseUint(f[:8], 16, 32)
	if err != nil {
		return 0, fmt.Errorf("WAL file name %q", f)
	}
	s.tli = uint32(t)
	return ParseLSN(l)
}

// walReadMax bounds one pg_read_binary_file.
const walReadMax = 4 << 20

// file is the name of segment segno's file, relative to the data
// directory.
func (s *pgWALStream) file(segno uint64) string {
	per := (1 << 32) / s.seg
	return fmt.Sprintf("pg_wal/%08X%08X%08X", s.tli, segno/per, segno%per)
}

// read appends the WAL from what is held up to target, one file piece per
// statement.
func (s *pgWALStream) read(ctx context.Context, target uint64) error {
	for pos := s.recvEnd(); pos < target; pos = s.recvEnd() {
		segno := pos / s.seg
		end := min(target, (segno+1)*s.seg, pos+walReadMax)
		name := s.file(segno)
		rr := s.c.PgConn().ExecParams(ctx, "SELECT pg_read_binary_file($1, $2, $3)",
			[][]byte{[]byte(name), []byte(strconv.FormatUint(pos%s.seg, 10)), []byte(strconv.FormatUint(end-pos, 10))},
			nil, nil, []int16{1})
		for rr.NextRow() {
			if v := rr.Values(); len(v) == 1 {
				s.take(pos, v[0])
			}
		}
		if _, err := rr.Close(); err != nil {
			return err
		}
		if s.recvEnd() != end {
			return fmt.Errorf("%s: read %d bytes at %d, wanted %d", name, s.recvEnd()-pos, pos%s.seg, end-pos)
		}
	}
	return nil
}

// BackendPID is the server session reading the WAL (benchmarks read its
// CPU time).
func (s *pgWALStream) BackendPID() int { return int(s.c.PgConn().PID()) }

// Capture says how commit_ts is obtained (the history header's commit_ts).
func (s *pgWALStream) Capture() string {
	return "commit LSN (end of the commit record) from the WAL's commit records, read from pg_wal with a temporary physical slot: exact WAL commit order"
}

func (s *pgWALStream) recvEnd() uint64 { return s.bufLSN + uint64(len(s.buf)) }

// walParseAt is how much WAL is held before it is parsed while reading, so
// what the stream holds stays bounded when much WAL was written since the
// last Poll (other databases' bulk loads, a run read only at the end).
var walParseAt = 1 << 20

// Poll reads the WAL from where the last Poll stopped up to the flush
// position the server reports now, and returns the commit records in it.
// It first lets the slot release the WAL already parsed.
func (s *pgWALStream) Poll(ctx context.Context) ([]CommitRecord, error) {
	if s.bufLSN > s.released {
		if _, err := s.c.Exec(ctx, `SELECT pg_replication_slot_advance(slot_name, $2::text::pg_lsn) FROM pg_replication_slots
			WHERE slot_name = $1 AND restart_lsn < $2::text::pg_lsn`, s.slot, fmtLSN(s.bufLSN)); err != nil {
			return nil, err
		}
		s.released = s.bufLSN
	}
	target, err := s.flush(ctx)
	if err != nil {
		return nil, err
	}
	var out []CommitRecord
	for s.recvEnd() < target {
		if err := s.read(ctx, min(target, s.recvEnd()+uint64(walParseAt))); err != nil {
			return nil, err
		}
		if out, err = s.parse(out); err != nil {
			return nil, err
		}
	}
	return s.parse(out)
}

func fmtLSN(l uint64) string { return fmt.Sprintf("%X/%X", l>>32, uint32(l)) }

// take appends WAL read from LSN at, dropping what is already held.
func (s *pgWALStream) take(at uint64, data []byte) {
	end := s.recvEnd()
	if at > end {
		return
	}
	if skip := end - at; skip < uint64(len(data)) {
		s.buf = append(s.buf, data[skip:]...)
	}
}

// pageHdr returns the size of the header of the page starting at lsn, or
// ok false when that page's header is not received yet.
func (s *pgWALStream) pageHdr(lsn uint64) (uint64, bool, error) {
	if lsn < s.bufLSN || lsn+walShortPageHdr > s.recvEnd() {
		return 0, false, nil
	}
	p := s.buf[lsn-s.bufLSN:]
	if addr := binary.LittleEndian.Uint64(p[8:]); addr != lsn {
		return 0, false, fmt.Errorf("WAL page at %X/%X says it is at %X/%X", lsn>>32, uint32(lsn), addr>>32, uint32(addr))
	}
	if binary.LittleEndian.Uint16(p[2:])&xlpLongHeader != 0 {
		return walLongPageHdr, true, nil
	}
	return walShortPageHdr, true, nil
}

// advance returns the LSN n record bytes after pos (page headers skipped),
// ok false when that is beyond what is received; with keep, the bytes are
// appended to dst.
func (s *pgWALStream) advance(pos, n uint64, keep bool, dst []byte) (uint64, []byte, bool, error) {
	for n > 0 {
		if pos%s.blck == 0 {
			h, ok, err := s.pageHdr(pos)
			if !ok || err != nil {
				return 0, nil, false, err
			}
			pos += h
		}
		k := min(s.blck-pos%s.blck, n)
		if pos+k > s.recvEnd() {
			return 0, nil, false, nil
		}
		if keep {
			dst = append(dst, s.buf[pos-s.bufLSN:pos-s.bufLSN+k]...)
		}
		pos += k
		n -= k
	}
	return pos, dst, true, nil
}

// parse appends the commit records of the complete WAL records received
// and drops the bytes before the next record.
func (s *pgWALStream) parse(out []CommitRecord) ([]CommitRecord, error) {
	for !s.synced {
		// The first record boundary: after the page's continuation of a
		// record that began before it (xlp_rem_len), if that ends here.
		h, ok, err := s.pageHdr(s.next)
		if err != nil || !ok {
			return out, err
		}
		rem := uint64(binary.LittleEndian.Uint32(s.buf[s.next-s.bufLSN+16:]))
		if start := s.next + h + (rem+7)&^7; start < s.next+s.blck {
			s.next, s.synced = start, true
			break
		}
		s.next += s.blck
		if s.next > s.recvEnd() {
			return out, nil
		}
	}
	var hdr [walRecHdr]byte
	for {
		pos := s.next
		if pos%s.blck == 0 {
			h, ok, err := s.pageHdr(pos)
			if err != nil {
				return out, err
			}
			if !ok {
				break
			}
			pos += h
		}
		_, b, ok, err := s.advance(pos, walRecHdr, true, hdr[:0])
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
		tot := uint64(binary.LittleEndian.Uint32(b))
		if tot < walRecHdr {
			return out, fmt.Errorf("WAL record at %X/%X: length %d", pos>>32, uint32(pos), tot)
		}
		rmid, info := b[17], b[16]
		commit := rmid == rmXact && (info&xactOpMask == xactCommit || info&xactOpMask == xactCommitPrep)
		end, rec, ok, err := s.advance(pos, tot, commit, s.rec[:0])
		if err != nil {
			return out, err
		}
		if !ok {
			break
		}
		// EndRecPtr: the record's end, aligned (test_decoding's COMMIT lsn).
		end = (end + 7) &^ 7
		if rmid == rmXLOG && info&^xlrInfoMask == xlogSwitch {
			// The rest of the segment is unused: the next record starts
			// the next segment.
			end = (end + s.seg - 1) / s.seg * s.seg
		}
		if commit {
			s.rec = rec
			r, mine, err := s.commitRecord(rec, end)
			if err != nil {
				return out, fmt.Errorf("WAL commit record at %X/%X: %v", pos>>32, uint32(pos), err)
			}
			if mine {
				out = append(out, r)
			}
		}
		s.next = end
	}
	// Keep from the page holding the next record (its header is read
	// again when the record starts the page).
	keep := s.next
	if keep > s.recvEnd() {
		keep = s.recvEnd()
	}
	if drop := keep - s.bufLSN; drop > 0 {
		s.buf = s.buf[:copy(s.buf, s.buf[drop:])]
		s.bufLSN = keep
	}
	return out, nil
}

// commitRecord reads a COMMIT or COMMIT PREPARED record (header and body);
// mine is false for another database's transaction.
func (s *pgWALStream) commitRecord(rec []byte, end uint64) (CommitRecord, bool, error) {
	xid := binary.LittleEndian.Uint32(rec[4:])
	info := rec[16]
	off, main := walRecHdr, -1
	for off < len(rec) && main < 0 {
		switch id := rec[off]; id {
		case 255: // XLR_BLOCK_ID_DATA_SHORT
			if off+2 > len(rec) {
				return CommitRecord{}, false, fmt.Errorf("truncated")
			}
			main = int(rec[off+1])
			off += 2
		case 254: // XLR_BLOCK_ID_DATA_LONG
			if off+5 > len(rec) {
				return CommitRecord{}, false, fmt.Errorf("truncated")
			}
			main = int(binary.LittleEndian.Uint32(rec[off+1:]))
			off += 5
		case 253: // XLR_BLOCK_ID_ORIGIN
			off += 3
		case 252: // XLR_BLOCK_ID_TOPLEVEL_XID
			off += 5
		default:
			return CommitRecord{}, false, fmt.Errorf("unexpected block reference %d", id)
		}
	}
	if main < 8 || main > len(rec)-off {
		return CommitRecord{}, false, fmt.Errorf("main data of %d bytes", main)
	}
	d := rec[len(rec)-main:]
	us := int64(binary.LittleEndian.Uint64(d))
	if info&xactHasInfo != 0 {
		r := walBody{d: d, p: 8}
		xinfo := r.u32()
		if xinfo&xinfoDBInfo != 0 {
			db := r.u32()
			r.u32() // tablespace
			if r.bad {
				return CommitRecord{}, false, fmt.Errorf("truncated")
			}
			if db != s.db {
				return CommitRecord{}, false, nil
			}
		}
		if info&xactOpMask == xactCommitPrep {
			if xinfo&xinfoSubxacts != 0 {
				r.skip(4, r.u32())
			}
			if xinfo&xinfoRelfiles != 0 {
				r.skip(12, r.u32())
			}
			if xinfo&xinfoDropStats != 0 && s.ver >= 150000 {
				r.skip(12, r.u32()) // xl_xact_stats_item
			}
			if xinfo&xinfoInvals != 0 {
				r.skip(16, r.u32())
			}
			if xinfo&xinfoTwoPhase == 0 {
				return CommitRecord{}, false, fmt.Errorf("COMMIT PREPARED without its xid")
			}
			xid = r.u32()
			if r.bad {
				return CommitRecord{}, false, fmt.Errorf("truncated")
			}
		}
	}
	t := time.UnixMicro(us + pgEpochUnixMicro).UTC()
	return CommitRecord{XID: uint64(xid), LSN: end, Time: t.Format("2006-01-02 15:04:05.999999-07")}, true, nil
}

// walBody reads little-endian fields of a record body.
type walBody struct {
	d   []byte
	p   int
	bad bool
}

func (r *walBody) u32() uint32 {
	if r.p+4 > len(r.d) {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint32(r.d[r.p:])
	r.p += 4
	return v
}

func (r *walBody) skip(size int, n uint32) {
	if uint64(n)*uint64(size) > uint64(len(r.d)) {
		r.bad = true
		return
	}
	r.p += size * int(n)
}

func (s *pgWALStream) Close(ctx context.Context) error {
	// The slot is temporary: it ends with the session.
	_, err := s.c.Exec(ctx, "SELECT pg_drop_replication_slot($1)", s.slot)
	if e := s.c.Close(ctx); err == nil {
		err = e
	}
	return err
}

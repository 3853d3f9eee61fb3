// Package cobra decodes the binary client logs of Cobra (Tan et al.,
// "Cobra: Making Transactional Key-Value Stores Verifiably Serializable",
// OSDI 2020), as read by CobraVerifier and by PolySI/VeriStrong's Cobra
// loader: a directory holding one log per client, named T<n>.log (other
// files, such as Cobra's T<n>.debug text logs, are ignored).
//
// Each log is a Java DataOutputStream: big-endian, a one-byte record tag
// followed by 64-bit signed integers:
//
//	'S' txn_id [timestamp]                      transaction start
//	'W' write_id key value                      write
//	'R' writer_txn_id write_id key value        read, naming the write it read
//	'C' txn_id [timestamp]                      commit
//
// The timestamps are present when Cobra ran with TIME_ORDER_ON. The decoder
// tells per file: it parses the file without them and, if that fails, with
// them, and reports the first error of the reading that got further.
// Aborted transactions are not logged.
//
// Mapping to txray's model:
//   - each file is one session (session name: the file name without
//     ".log"), its transactions in file order; History.Txns lists files in
//     numeric order of n, each in file order;
//   - write ids are unique (Cobra guarantees it), so a write's value is its
//     write id and a read's value is the write id it names: reads are
//     matched to writes by write id, as Cobra's verifier does. The logged
//     value (a hash) is not used;
//   - a read naming write id 0xbebeebee or 0xdeadbeef with writer
//     0xbebeebee or 0xdeadbeef is a read of the initial state (nil);
//   - a read with writer 0xbebeebee and write id 0x23332333 or 0x66666666
//     is a garbage-collection marker read of Cobra's, not a client read: it
//     is skipped and counted in History.Ignored;
//   - a transaction whose 'C' is missing (the log ends, or the next 'S'
//     comes first) has an unknown outcome; a note says how many;
//   - timestamps, when present, are detected and skipped: Cobra trusts them
//     only up to a clock-drift threshold (TIME_DRIFT_THRESHOLD), so they are
//     not exact client intervals; a note and Header.Extra say they were
//     there.
//
// Bad input (an unknown tag, a truncated record, a 'C' naming another
// transaction, a record outside a transaction) is an InputError naming the
// file, the byte offset (in the message) and the record field.
package cobra

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

func init() {
	history.RegisterFormat(history.Format{
		Name:      "cobra",
		Doc:       "Cobra binary client logs: a directory of T<n>.log files (big-endian S/W/R/C records), or one such file",
		Sniff:     Sniff,
		Decode:    Decode,
		DecodeDir: DecodeDir,
		SniffDir:  SniffDir,
	})
}

// Special ids of Cobra's logs.
const (
	InitID   = 0xbebeebee // writer and write id of the initial state
	NullID   = 0xdeadbeef // "no writer" (null read)
	gcTrueID = 0x23332333 // garbage-collection marker reads
	gcFalse  = 0x66666666
)

// logFiles lists dir's T<n>.log files in numeric order of n (then by name).
func logFiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type lf struct {
		name string
		n    int64
	}
	var fs []lf
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".log") {
			continue
		}
		n := int64(-1)
		if strings.HasPrefix(name, "T") {
			if v, err := strconv.ParseInt(strings.TrimSuffix(name[1:], ".log"), 10, 64); err == nil {
				n = v
			}
		}
		fs = append(fs, lf{name, n})
	}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].n != fs[j].n {
			return fs[i].n < fs[j].n
		}
		return fs[i].name < fs[j].name
	})
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out, nil
}

// SniffDir scores a directory: 90 when it holds T<n>.log files and the first
// one begins like a Cobra log ('S' record, or empty).
func SniffDir(dir string) int {
	fs, err := logFiles(dir)
	if err != nil || len(fs) == 0 {
		return 0
	}
	for _, name := range fs {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		b := make([]byte, 4096)
		n, _ := io.ReadFull(f, b)
		f.Close()
		if n == 0 {
			continue
		}
		if Sniff(b[:n]) > 0 {
			return 90
		}
		return 0
	}
	return 0
}

// Sniff scores the first bytes of a single log: 60 when they parse as Cobra
// records (with or without timestamps) up to the end of the prefix.
func Sniff(prefix []byte) int {
	if len(prefix) < 9 || prefix[0] != 'S' {
		return 0
	}
	for _, ts := range []bool{false, true} {
		p := &parser{data: prefix, ts: ts, sniff: true}
		if p.run() == nil && p.txns > 0 {
			return 60
		}
	}
	return 0
}

// DecodeDir decodes a directory of Cobra logs.
func DecodeDir(dir string, opts history.DecodeOptions) (*history.History, error) {
	fs, err := logFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, &history.InputError{File: dir, Msg: "no T<n>.log files (a Cobra log directory holds one per client)"}
	}
	d := newDecoder()
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > len(fs) {
		other := ""
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".log") || e.IsDir() {
				other = e.Name()
				break
			}
		}
		d.h.Notes = append(d.h.Notes, fmt.Sprintf("%d directory entr(ies) other than *.log files ignored (e.g. %s; Cobra's verifier reads only the .log files)", len(ents)-len(fs), other))
	}
	for _, name := range fs {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if err := d.file(filepath.Join(dir, name), strings.TrimSuffix(name, ".log"), data); err != nil {
			return nil, err
		}
	}
	return d.finish(), nil
}

// Decode decodes a single Cobra log (one session).
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	data, err := io.ReadAll(bufio.NewReader(r))
	if err != nil {
		return nil, err
	}
	name := opts.Name
	sess := strings.TrimSuffix(filepath.Base(name), ".log")
	if sess == "" || sess == "." {
		sess = "T0"
	}
	d := newDecoder()
	if err := d.file(name, sess, data); err != nil {
		return nil, err
	}
	return d.finish(), nil
}

type decoder struct {
	h       *history.History
	open    int // transactions without a commit record
	timed   int // files with timestamps
	untimed int
}

func newDecoder() *decoder {
	h := history.New()
	h.Header.Format = "cobra"
	h.Header.Workload = "rw-register"
	return &decoder{h: h}
}

func (d *decoder) file(path, sess string, data []byte) error {
	var best *parser
	var bestErr error
	for _, ts := range []bool{false, true} {
		p := &parser{data: data, ts: ts, file: path}
		err := p.run()
		if err == nil {
			d.emit(p, sess)
			return nil
		}
		if best == nil || p.off > best.off {
			best, bestErr = p, err
		}
	}
	return bestErr
}

func (d *decoder) emit(p *parser, sess string) {
	h := d.h
	sid := h.Sessions.Str(sess)
	if p.ts {
		d.timed++
	} else if len(p.out) > 0 {
		d.untimed++
	}
	for i, t := range p.out {
		tx := history.Txn{Session: sid, Seq: int32(i), ID: sess + ":" + strconv.FormatInt(t.id, 10), Status: history.Committed}
		if !t.committed {
			tx.Status = history.Unknown
			d.open++
		}
		tx.Ops = make([]history.Op, len(t.ops))
		for j, o := range t.ops {
			op := history.Op{Kind: history.Read, Key: h.Keys.Int(o.key), Value: history.NoValue}
			if o.write {
				op.Kind = history.Write
			}
			if !o.init {
				op.Value = h.Values.Int(o.wid)
			}
			tx.Ops[j] = op
		}
		h.Add(tx)
	}
	if p.gc > 0 {
		h.Ignore("cobra garbage-collection read", p.gc)
	}
}

func (d *decoder) finish() *history.History {
	h := d.h
	h.Evidence.Sessions = len(h.Txns) > 0
	if d.timed > 0 {
		// Cobra compares these timestamps only up to a clock-drift bound
		// (TIME_DRIFT_THRESHOLD); used as exact client intervals they could
		// order transactions that were concurrent and cause false rejects.
		h.Header.Extra = map[string]string{"cobra_timestamps": fmt.Sprintf("%d of %d logs (TIME_ORDER_ON)", d.timed, d.timed+d.untimed)}
		h.Notes = append(h.Notes, "Cobra logs with start/commit timestamps (TIME_ORDER_ON): not used as client intervals, since Cobra itself trusts them only up to a clock-drift threshold")
	}
	if d.open > 0 {
		h.Notes = append(h.Notes, fmt.Sprintf("%d transaction(s) have no commit record: outcome unknown", d.open))
	}
	return h
}

type rop struct {
	write bool
	key   int64
	wid   int64
	init  bool // a read of the initial state
}

type rtxn struct {
	id        int64
	committed bool
	ops       []rop
}

// parser reads one log's records.
type parser struct {
	data  []byte
	off   int
	ts    bool
	sniff bool // the data is a prefix: a truncated last record is fine
	file  string
	out   []rtxn
	txns  int
	gc    int
}

func (p *parser) errf(at int, field, format string, args ...any) error {
	return history.Errorf(p.file, 0, field, "byte offset %d: %s", at, fmt.Sprintf(format, args...))
}

var errPrefixEnd = fmt.Errorf("end of prefix")

// i64 reads one big-endian int64 of record field name.
func (p *parser) i64(rec int, field string) (int64, error) {
	if len(p.data)-p.off < 8 {
		if p.sniff {
			return 0, errPrefixEnd
		}
		return 0, p.errf(rec, field, "truncated record: %d byte(s) left, want 8 for %s", len(p.data)-p.off, field)
	}
	v := int64(binary.BigEndian.Uint64(p.data[p.off:]))
	p.off += 8
	return v, nil
}

func (p *parser) run() error {
	err := p.records()
	if err == errPrefixEnd {
		return nil
	}
	return err
}

func (p *parser) records() error {
	cur := -1 // index in out of the open transaction
	for p.off < len(p.data) {
		rec := p.off
		tag := p.data[p.off]
		p.off++
		switch tag {
		case 'S':
			id, err := p.i64(rec, "S.txn_id")
			if err != nil {
				return err
			}
			if p.ts {
				if _, err = p.i64(rec, "S.timestamp"); err != nil {
					return err
				}
			}
			p.out = append(p.out, rtxn{id: id})
			cur = len(p.out) - 1
			p.txns++
		case 'C':
			id, err := p.i64(rec, "C.txn_id")
			if err != nil {
				return err
			}
			if p.ts {
				if _, err = p.i64(rec, "C.timestamp"); err != nil {
					return err
				}
			}
			if cur < 0 {
				return p.errf(rec, "C.txn_id", "commit of transaction %d outside any transaction", id)
			}
			if p.out[cur].id != id {
				return p.errf(rec, "C.txn_id", "commit of transaction %d inside transaction %d", id, p.out[cur].id)
			}
			p.out[cur].committed = true
			cur = -1
		case 'W':
			var f [3]int64
			for i, name := range [3]string{"W.write_id", "W.key", "W.value"} {
				v, err := p.i64(rec, name)
				if err != nil {
					return err
				}
				f[i] = v
			}
			if cur < 0 {
				return p.errf(rec, "W", "write outside any transaction")
			}
			p.out[cur].ops = append(p.out[cur].ops, rop{write: true, key: f[1], wid: f[0]})
		case 'R':
			var f [4]int64
			for i, name := range [4]string{"R.writer_txn_id", "R.write_id", "R.key", "R.value"} {
				v, err := p.i64(rec, name)
				if err != nil {
					return err
				}
				f[i] = v
			}
			if cur < 0 {
				return p.errf(rec, "R", "read outside any transaction")
			}
			wtxn, wid := f[0], f[1]
			special := wtxn == InitID || wtxn == NullID
			switch {
			case special && (wid == InitID || wid == NullID):
				p.out[cur].ops = append(p.out[cur].ops, rop{key: f[2], init: true})
			case wtxn == InitID && (wid == gcTrueID || wid == gcFalse):
				p.gc++
			case special:
				return p.errf(rec, "R.write_id", "read from the initial/null writer %#x names write id %#x (want %#x or %#x)", wtxn, wid, InitID, NullID)
			default:
				p.out[cur].ops = append(p.out[cur].ops, rop{key: f[2], wid: wid})
			}
		default:
			return p.errf(rec, "tag", "unknown record tag %#02x (want 'S', 'W', 'R' or 'C')", tag)
		}
	}
	return nil
}

// Package polysi decodes the plain-text history format of PolySI, Plume and
// IsoVista: one operation per line,
//
//	r(key,value,session,txn)   a read of value from key
//	w(key,value,session,txn)   a write of value to key
//
// with non-negative integer keys, values and session ids. This is a
// key-value register model (PolySI, Huang et al., VLDB 2023, §2): each write
// installs a value, each read returns one.
//
// Decoding rules, following the loaders of those tools:
//   - All lines with the same transaction id form one transaction, in line
//     order (PolySI looks transactions up by id, so lines need not be
//     adjacent). A transaction id used by two sessions is an InputError.
//   - Session order is the order in which a session's transactions first
//     appear. History.Txns is in order of first appearance too.
//   - Value 0 is the initial value of every key (PolySI installs an initial
//     transaction writing 0 to each key; IsoVista's documentation says a read
//     before any write returns 0). A read of 0 therefore decodes as a read of
//     the initial state (history.NoValue), unless some transaction writes 0
//     to that key, in which case it stays a read of the value 0 and a note is
//     added.
//   - An explicit initial transaction — the first transaction, writing one
//     value (0) to every key and nothing else, whose prior state nobody
//     observed (the rule of package check/regread) — is the initial state:
//     it is removed (counted in History.Ignored) and reads of its values
//     become reads of the initial state. Treated as an ordinary transaction
//     it would be one more concurrent writer and hide anomalies.
//   - Transaction id -1 marks an aborted write (Plume/IsoVista). Consecutive
//     -1 lines of one session form one aborted transaction in that session
//     (the format does not say how aborted writes were grouped, so the
//     smallest grouping the line order supports is used). Reads with
//     transaction id -1 (which those loaders drop) are kept in the aborted
//     transaction.
//
// Blank lines are skipped; anything else that is not an operation is an
// InputError naming the line.
package polysi

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/txray/txray/check/regread"
	"github.com/txray/txray/history"
)

func init() {
	history.RegisterFormat(history.Format{
		Name:   "polysi",
		Doc:    "PolySI/Plume/IsoVista text history: r|w(key,value,session,txn) per line",
		Sniff:  Sniff,
		Decode: Decode,
	})
}

// Sniff scores prefix: 95 when its first non-blank line is an operation.
func Sniff(prefix []byte) int {
	p := history.TrimBOMAndSpace(prefix)
	line := p
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		line = p[:i]
	} else if len(p) >= 64<<10 {
		return 0
	}
	if _, err := parseLine(bytes.TrimSpace(line)); err != "" {
		return 0
	}
	return 95
}

type op struct {
	write               bool
	key, val, sess, txn int64
}

// parseLine parses r(k,v,s,t); it returns a message on failure.
func parseLine(b []byte) (op, string) {
	var o op
	if len(b) < 2 || (b[0] != 'r' && b[0] != 'w') || b[1] != '(' {
		return o, "want r(key,value,session,txn) or w(key,value,session,txn)"
	}
	o.write = b[0] == 'w'
	b = b[2:]
	var f [4]int64
	names := [4]string{"key", "value", "session", "txn"}
	for i := 0; i < 4; i++ {
		b = bytes.TrimLeft(b, " \t")
		j := 0
		if j < len(b) && b[j] == '-' {
			j++
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(string(b[:j]), 10, 64)
		if err != nil {
			return o, names[i] + ": want an integer"
		}
		if n < 0 && !(i == 3 && n == -1) {
			return o, names[i] + ": must not be negative"
		}
		f[i] = n
		b = bytes.TrimLeft(b[j:], " \t")
		want := byte(',')
		if i == 3 {
			want = ')'
		}
		if len(b) == 0 || b[0] != want {
			return o, names[i] + ": expected '" + string(want) + "'"
		}
		b = b[1:]
	}
	if len(bytes.TrimSpace(b)) != 0 {
		return o, "unexpected text after ')'"
	}
	o.key, o.val, o.sess, o.txn = f[0], f[1], f[2], f[3]
	return o, ""
}

// Decode reads a PolySI text history.
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	h := history.New()
	h.Header.Format = "polysi"
	h.Header.Workload = "rw-register"
	type tinfo struct {
		idx  int32
		sess int64
	}
	txns := map[int64]tinfo{}
	seqs := map[int32]int32{}
	abortOpen := map[int64]int32{} // session -> index of its open aborted txn
	lastTxn := map[int64]int64{}   // session -> txn id of its previous line
	newTxn := func(sess int64, id string, st history.Status) int32 {
		sid := h.Sessions.Int(sess)
		t := h.Add(history.Txn{Session: sid, Seq: seqs[sid], ID: id, Status: st})
		seqs[sid]++
		return t.Index
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		o, msg := parseLine(b)
		if msg != "" {
			field := ""
			if i := strings.Index(msg, ": "); i >= 0 {
				field, msg = msg[:i], msg[i+2:]
			}
			return nil, history.Errorf(opts.Name, line, field, "%s, got %q", msg, abbrev(b))
		}
		var ti int32
		if o.txn == -1 {
			if lt, ok := lastTxn[o.sess]; ok && lt == -1 {
				ti = abortOpen[o.sess]
			} else {
				ti = newTxn(o.sess, "aborted@"+strconv.Itoa(line), history.Aborted)
				abortOpen[o.sess] = ti
			}
		} else if t, ok := txns[o.txn]; ok {
			if t.sess != o.sess {
				return nil, history.Errorf(opts.Name, line, "session", "transaction %d belongs to session %d, not %d", o.txn, t.sess, o.sess)
			}
			ti = t.idx
		} else {
			ti = newTxn(o.sess, strconv.FormatInt(o.txn, 10), history.Committed)
			txns[o.txn] = tinfo{ti, o.sess}
		}
		lastTxn[o.sess] = o.txn
		k := h.Keys.Int(o.key)
		v := h.Values.Int(o.val)
		hop := history.Op{Kind: history.Read, Key: k, Value: v}
		if o.write {
			hop.Kind = history.Write
		}
		h.Txns[ti].Ops = append(h.Txns[ti].Ops, hop)
	}
	if err := sc.Err(); err != nil {
		return nil, history.Errorf(opts.Name, line+1, "", "read error: %v", err)
	}
	// An explicit initial transaction (IsoVista, PolySI's loader) is the
	// initial state, not a concurrent writer (regread.DropInitialTxn).
	regread.DropInitialTxn(h, regread.Options{InitialValue: "0"})
	zeroWritten := map[int32]bool{}
	zero, hasZero := h.Values.LookupInt(0)
	kept := 0
	if hasZero {
		for i := range h.Txns {
			for _, o := range h.Txns[i].Ops {
				if o.Kind == history.Write && o.Value == zero {
					zeroWritten[o.Key] = true
				}
			}
		}
		for i := range h.Txns {
			ops := h.Txns[i].Ops
			for j := range ops {
				o := &ops[j]
				if o.Kind != history.Read || o.Value != zero {
					continue
				}
				if zeroWritten[o.Key] {
					kept++
					continue
				}
				o.Value = history.NoValue
			}
		}
	}
	if kept > 0 {
		h.Notes = append(h.Notes, strconv.Itoa(kept)+" read(s) of 0 kept as reads of the value 0 because 0 is also written to their key (0 is otherwise the initial value)")
	}
	h.Evidence.Sessions = len(h.Txns) > 0
	return h, nil
}

func abbrev(b []byte) string {
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

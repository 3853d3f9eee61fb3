// Package edn decodes and encodes Jepsen histories in EDN, the format Jepsen
// writes (history.edn) and Elle and elle-cli read: a sequence of op maps
//
//	{:index 3, :time 120, :type :ok, :process 1, :f :txn, :value [[:append 5 8] [:r 6 [1 2]]]}
//
// either one per line or as one top-level vector or list of maps. Newer
// Jepsen versions print ops as records, #jepsen.history.Op{...}; those read
// as maps. How invocations and completions become transactions is specified
// on Builder, which package ellejson shares.
package edn

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"sort"
	"strconv"

	"github.com/txray/txray/history"
	"github.com/txray/txray/internal/edn"
)

func init() {
	history.RegisterFormat(history.Format{
		Name:   "edn",
		Doc:    "Jepsen/Elle EDN history (one op map per line, or one vector of op maps)",
		Sniff:  Sniff,
		Decode: Decode,
		Mapped: true,
	})
}

// Sniff scores how likely prefix is a Jepsen EDN history.
func Sniff(prefix []byte) int {
	p := history.TrimBOMAndSpace(prefix)
	// Skip leading ; comment lines.
	for len(p) > 0 && p[0] == ';' {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return 0
		}
		p = history.TrimBOMAndSpace(p[i+1:])
	}
	if len(p) == 0 {
		return 0
	}
	if bytes.HasPrefix(p, []byte("#jepsen.history.Op{")) {
		return 95
	}
	if p[0] == '[' || p[0] == '(' {
		p = bytes.TrimLeft(p[1:], " \t\r\n,")
	}
	if len(p) == 0 || (p[0] != '{' && p[0] != '#') {
		return 0
	}
	if bytes.Contains(p, []byte(":type")) && (bytes.Contains(p, []byte(":value")) || bytes.Contains(p, []byte(":process"))) {
		return 90
	}
	if bytes.HasPrefix(p, []byte("{:")) {
		return 10
	}
	return 0
}

// Decode reads a Jepsen EDN history. Errors are *history.InputError naming
// the line (and the field where one is at fault).
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	b := NewBuilder(opts.Name, opts.Workload)
	var err error
	if fastOff {
		err = Feed(edn.NewReader(r), b, opts.Name)
	} else if opts.SizeHint >= parallelMin && runtime.GOMAXPROCS(0) >= parallelProcs {
		src := startChunks(r, runtime.GOMAXPROCS(0))
		b.arenas = history.NewOpArenas(1 << 16)
		b.lists = history.NewArenas[int32](1 << 18)
		b.prefault = true
		err = decodeStream(src, b, opts.Name, opts.SizeHint)
		b.arenas.Stop()
		b.lists.Stop()
		b.faulter.Stop()
		b.arenas, b.lists, b.prefault, b.faulter = nil, nil, false, nil
		src.close()
	} else {
		err = decodeStream(&lineSrc{br: bufio.NewReaderSize(r, 1<<16)}, b, opts.Name, opts.SizeHint)
	}
	if err != nil {
		return nil, err
	}
	h, err := b.Finish()
	if err != nil {
		return nil, err
	}
	h.Header.Format = "edn"
	return h, nil
}

// fastOff disables the fast path (differential tests).
var fastOff bool

// Feed reads op maps from rd into b: either a stream of top-level maps or a
// single top-level vector/list of maps. Syntax errors become InputErrors.
func Feed(rd *edn.Reader, b *Builder, file string) error {
	synErr := func(err error) error { return synErr(err, file) }
	c, err := rd.Peek()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return synErr(err)
	}
	if c == '[' || c == '(' {
		closer := byte(']')
		if c == '(' {
			closer = ')'
		}
		rd.Skip()
		for {
			c, err := rd.Peek()
			if err == io.EOF {
				l, _ := rd.Pos()
				return history.Errorf(file, l, "", "the top-level collection is never closed (expected %q)", closer)
			}
			if err != nil {
				return synErr(err)
			}
			if c == closer {
				rd.Skip()
				break
			}
			v, err := rd.Read()
			if err != nil {
				return synErr(err)
			}
			if err := b.Add(v, int(v.Line)); err != nil {
				return err
			}
		}
		if _, err := rd.Peek(); err != io.EOF {
			if err != nil {
				return synErr(err)
			}
			l, _ := rd.Pos()
			return history.Errorf(file, l, "", "unexpected data after the top-level collection")
		}
		return nil
	}
	for {
		v, err := rd.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return synErr(err)
		}
		if err := b.Add(v, int(v.Line)); err != nil {
			return err
		}
	}
}

// synErr turns a syntax error of the reader into an InputError.
func synErr(err error, file string) error {
	var se *edn.SyntaxError
	if errors.As(err, &se) {
		return &history.InputError{File: file, Line: se.Line, Msg: "column " + strconv.Itoa(se.Col) + ": " + se.Msg}
	}
	return err
}

// Encode writes h as a Jepsen EDN history, one op map per line: for each
// transaction an :invoke and a completion (:ok, :fail, or :info; a
// never-completed unknown transaction, Complete == Never, gets only its
// invocation). Sessions become integer :process numbers (the session's own
// number when it is an integer, otherwise a fresh one); transactions without
// a session are written as completion-only ops without :process. When
// transactions carry client times, events are ordered by time (invocations
// before completions at equal times, so no real-time order is invented) and
// carry :time; otherwise each invocation is followed directly by its
// completion, which Elle reads as a sequential real-time order. :index numbers
// the lines from 0. Reads of unknown result are written as nil, list reads as
// vectors; keys and values are integers or strings.
func Encode(w io.Writer, h *history.History) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	procs := sessionProcs(h)
	type event struct {
		t      int64
		invoke bool
		txn    int32
	}
	evs := make([]event, 0, 2*len(h.Txns))
	timed := h.Evidence.ClientTime
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.HasTime {
			timed = false
		}
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Session >= 0 {
			evs = append(evs, event{t.Invoke, true, int32(i)})
		}
		if !(t.Status == history.Unknown && t.HasTime && t.Complete == Never) {
			evs = append(evs, event{t.Complete, false, int32(i)})
		}
	}
	if timed {
		sort.SliceStable(evs, func(a, b int) bool {
			if evs[a].t != evs[b].t {
				return evs[a].t < evs[b].t
			}
			return evs[a].invoke && !evs[b].invoke
		})
	}
	var buf []byte
	for idx, e := range evs {
		t := &h.Txns[e.txn]
		buf = append(buf[:0], "{:index "...)
		buf = strconv.AppendInt(buf, int64(idx), 10)
		if timed {
			buf = append(buf, ", :time "...)
			buf = strconv.AppendInt(buf, e.t, 10)
		}
		buf = append(buf, ", :type "...)
		switch {
		case e.invoke:
			buf = append(buf, ":invoke"...)
		case t.Status == history.Committed:
			buf = append(buf, ":ok"...)
		case t.Status == history.Aborted:
			buf = append(buf, ":fail"...)
		default:
			buf = append(buf, ":info"...)
		}
		if t.Session >= 0 {
			buf = append(buf, ", :process "...)
			buf = strconv.AppendInt(buf, procs[t.Session], 10)
		}
		buf = append(buf, ", :f :txn, :value ["...)
		for j := range t.Ops {
			if j > 0 {
				buf = append(buf, ' ')
			}
			buf = appendMop(buf, h, t, &t.Ops[j], e.invoke)
		}
		buf = append(buf, "]}\n"...)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// sessionProcs maps session ids to process numbers.
func sessionProcs(h *history.History) map[int32]int64 {
	procs := map[int32]int64{}
	used := map[int64]bool{}
	n := h.Sessions.Len()
	for s := 0; s < n; s++ {
		if sc := h.Sessions.Get(int32(s)); !sc.IsStr {
			procs[int32(s)] = sc.I
			used[sc.I] = true
		}
	}
	next := int64(0)
	for s := 0; s < n; s++ {
		if _, ok := procs[int32(s)]; ok {
			continue
		}
		for used[next] {
			next++
		}
		procs[int32(s)] = next
		used[next] = true
	}
	return procs
}

func appendMop(b []byte, h *history.History, t *history.Txn, o *history.Op, invoke bool) []byte {
	b = append(b, '[')
	switch o.Kind {
	case history.Read:
		b = append(b, ":r "...)
	case history.Write:
		b = append(b, ":w "...)
	case history.Append:
		b = append(b, ":append "...)
	default:
		b = append(b, ':')
		b = append(b, o.Kind.String()...)
		b = append(b, ' ')
	}
	b = appendScalar(b, h.Keys, o.Key)
	b = append(b, ' ')
	switch {
	case o.Kind == history.Read && (invoke || o.ListUnknown):
		b = append(b, "nil"...)
	case o.Kind == history.Read && o.IsList:
		b = append(b, '[')
		for i, v := range t.ListOf(o) {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendScalar(b, h.Values, v)
		}
		b = append(b, ']')
	case o.Value == history.NoValue:
		b = append(b, "nil"...)
	default:
		b = appendScalar(b, h.Values, o.Value)
	}
	return append(b, ']')
}

func appendScalar(b []byte, in *history.Interner, id int32) []byte {
	if id < 0 || int(id) >= in.Len() {
		return append(b, "nil"...)
	}
	s := in.Get(id)
	if s.IsStr {
		return edn.AppendString(b, s.S)
	}
	return strconv.AppendInt(b, s.I, 10)
}

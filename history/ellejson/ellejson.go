// Package ellejson decodes elle-cli's JSON form of a Jepsen history: a JSON
// array of op objects, or one op object per line (JSON Lines), e.g.
//
//	{"index":3,"process":1,"type":"ok","f":"txn","value":[["append",255,8],["r",253,[1,3,4]]]}
//
// Field meanings and the pairing of invocations with completions are exactly
// those of the EDN form (see edn.Builder, which this package uses): "type" is
// "invoke", "ok", "fail" or "info"; "process" an integer (anything else marks
// a nemesis op); micro-ops are ["r"|"w"|"append", key, value]; null is nil.
package ellejson

import (
	"bytes"
	"io"

	"github.com/txray/txray/history"
	hedn "github.com/txray/txray/history/edn"
	"github.com/txray/txray/internal/edn"
)

func init() {
	history.RegisterFormat(history.Format{
		Name:   "elle-json",
		Doc:    "elle-cli JSON history (array or lines of Jepsen op objects)",
		Sniff:  Sniff,
		Decode: Decode,
	})
}

// Sniff scores how likely prefix is elle-cli JSON. It requires an op object
// with "type" and one of "value"/"process", and rejects txray's native JSON
// Lines ("txray" header, "ops"/"status" fields) and TimeKiller JSON
// ("sid"/"sts"/"ops" fields).
func Sniff(prefix []byte) int {
	p := history.TrimBOMAndSpace(prefix)
	if len(p) == 0 {
		return 0
	}
	if p[0] == '[' {
		p = bytes.TrimLeft(p[1:], " \t\r\n")
	}
	if len(p) == 0 || p[0] != '{' {
		return 0
	}
	// Look at the first object (up to its first closing brace after "value"
	// would need a parser; the first line or 4 KiB is enough for a hint).
	first := p
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if len(first) > 4096 {
		first = first[:4096]
	}
	has := func(s string) bool { return bytes.Contains(first, []byte(s)) }
	if has(`"txray"`) || has(`"ops"`) || has(`"status"`) || has(`"sid"`) || has(`"sts"`) {
		return 0
	}
	if !has(`"type"`) {
		return 0
	}
	for _, t := range []string{`"invoke"`, `"ok"`, `"fail"`, `"info"`} {
		if has(t) && (has(`"value"`) || has(`"process"`)) {
			return 90
		}
	}
	return 0
}

// Decode reads an elle-cli JSON history. It reads the whole input into
// memory and tries the fast path (hedn.FeedJSON) first; when that declines,
// it decodes the input again with the general reader, so results and
// errors are the general reader's (see hedn.FeedJSON).
func Decode(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	if fastOff {
		return decodeGeneral(r, opts)
	}
	var buf bytes.Buffer
	if opts.SizeHint > 0 && opts.SizeHint < 1<<34 {
		buf.Grow(int(opts.SizeHint) + 512)
	}
	if _, err := buf.ReadFrom(r); err != nil {
		// The general reader meets the read error where it meets it.
		return decodeGeneral(io.MultiReader(bytes.NewReader(buf.Bytes()), errReader{err}), opts)
	}
	data := buf.Bytes()
	b := hedn.NewBuilder(opts.Name, opts.Workload)
	if hedn.FeedJSON(data, b) {
		if h, err := b.Finish(); err == nil {
			h.Header.Format = "elle-json"
			return h, nil
		}
	}
	return decodeGeneral(bytes.NewReader(data), opts)
}

// fastOff disables the fast path (differential tests).
var fastOff bool

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// decodeGeneral decodes with the general reader in JSON mode.
func decodeGeneral(r io.Reader, opts history.DecodeOptions) (*history.History, error) {
	rd := edn.NewReader(r)
	rd.JSON = true
	b := hedn.NewBuilder(opts.Name, opts.Workload)
	if err := hedn.Feed(rd, b, opts.Name); err != nil {
		return nil, err
	}
	h, err := b.Finish()
	if err != nil {
		return nil, err
	}
	h.Header.Format = "elle-json"
	return h, nil
}

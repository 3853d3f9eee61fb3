package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/txray/txray/history"
)

// versionSet decodes a predicate read's version set ("vs"): a list of
// [key, value] pairs, value null for the row's unborn version
// (history.Predicate.VersionSet). A key may appear once.
func (d *decoder) versionSet(raws []json.RawMessage, line int, field string) ([]history.Row, error) {
	vs := make([]history.Row, 0, len(raws))
	seen := make(map[int32]bool, len(raws))
	for j, raw := range raws {
		f := fmt.Sprintf("%s[%d]", field, j)
		var row []json.RawMessage
		if err := json.Unmarshal(raw, &row); err != nil || len(row) != 2 {
			return nil, d.err(line, f, "want [key, value] (value null for an absent row)")
		}
		k, err := d.scalar(row[0], line, f+"[0]", d.h.Keys)
		if err != nil {
			return nil, err
		}
		if seen[k] {
			return nil, d.err(line, f+"[0]", "key %s appears twice in the version set", d.h.KeyName(k))
		}
		seen[k] = true
		v := history.NoValue
		if b := bytes.TrimSpace(row[1]); len(b) > 0 && string(b) != "null" {
			if v, err = d.scalar(b, line, f+"[1]", d.h.Values); err != nil {
				return nil, err
			}
		}
		vs = append(vs, history.Row{Key: k, Value: v})
	}
	return vs, nil
}

// appendVersionSet writes a version set as "vs":[[k,v],...].
func appendVersionSet(b []byte, h *history.History, vs []history.Row) []byte {
	b = append(b, `,"vs":[`...)
	for i, r := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendScalar(b, h.Keys, r.Key)
		b = append(b, ',')
		if r.Value == history.NoValue {
			b = append(b, "null"...)
		} else {
			b = appendScalar(b, h.Values, r.Value)
		}
		b = append(b, ']')
	}
	return append(b, ']')
}

// vsetRecord is a decoded version_set record waiting for its transaction.
type vsetRecord struct {
	txn  string
	op   int
	vs   []history.Row
	line int
}

// versionSetRecord decodes {"type":"version_set","txn":ID,"op":J,"vs":[...]}:
// the version set of predicate read J (0-based op index) of the
// transaction whose id is ID, recorded after the transaction itself (the
// recorder learns version sets only once the version order is complete).
// It is attached when the whole input is read, so it may come before or
// after its transaction.
func (d *decoder) versionSetRecord(tl *txnLine, line int) error {
	if len(tl.Txn) == 0 {
		return d.err(line, "txn", "missing (a version_set record names its transaction's id)")
	}
	id, err := rawString(tl.Txn)
	if err != nil {
		return d.err(line, "txn", "%v", err)
	}
	if tl.Op == nil || *tl.Op < 0 {
		return d.err(line, "op", "missing or negative (the 0-based index of the predicate read in the transaction's ops)")
	}
	if tl.VS == nil {
		return d.err(line, "vs", "missing (a list of [key, value] pairs)")
	}
	vs, err := d.versionSet(tl.VS, line, "vs")
	if err != nil {
		return err
	}
	d.vsets = append(d.vsets, vsetRecord{txn: id, op: *tl.Op, vs: vs, line: line})
	return nil
}

// resolveVersionSets attaches version_set records to their predicate
// reads. A record naming no transaction, an ambiguous id, an op that is
// not a predicate read, or a read that already has a version set is an
// input error on the record's line.
func (d *decoder) resolveVersionSets() error {
	if len(d.vsets) == 0 {
		return nil
	}
	byID := make(map[string]int32, len(d.h.Txns))
	for i := range d.h.Txns {
		id := d.h.Txns[i].ID
		if _, dup := byID[id]; dup {
			byID[id] = -1
		} else {
			byID[id] = int32(i)
		}
	}
	for _, r := range d.vsets {
		i, ok := byID[r.txn]
		switch {
		case !ok:
			return d.err(r.line, "txn", "no transaction has id %q", r.txn)
		case i < 0:
			return d.err(r.line, "txn", "several transactions have id %q", r.txn)
		}
		t := &d.h.Txns[i]
		if r.op >= len(t.Ops) || t.Ops[r.op].Kind != history.PredRead || t.PredOf(&t.Ops[r.op]) == nil {
			return d.err(r.line, "op", "op %d of transaction %q is not a predicate read", r.op, r.txn)
		}
		p := t.PredOf(&t.Ops[r.op])
		if p.HasVersionSet {
			return d.err(r.line, "vs", "predicate read %d of transaction %q already has a version set", r.op, r.txn)
		}
		p.VersionSet, p.HasVersionSet = r.vs, true
		d.h.Evidence.VersionSets = true
	}
	d.vsets = nil
	return nil
}

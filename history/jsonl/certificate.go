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

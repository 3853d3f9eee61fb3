package sqlpred

import (
	"strings"
	"testing"

	"github.com/txray/txray/history"
)

// TestSchemaMatches: a WHERE clause evaluated on recorded row versions —
// key columns from the key pattern, row columns from row images, the value
// column, deleted and unborn versions, and the (k, v) default for
// undeclared tables.
func TestSchemaMatches(t *testing.T) {
	h := history.New()
	h.Header.Tables = []history.Table{{Name: "orders", Key: "o:{w}:{id}", Columns: []string{"cust"}, Value: "ver"}}
	k := h.Keys.Str("o:1:7")
	other := h.Keys.Str("x:1")
	v10, v11, v12, v13 := h.Values.Int(10), h.Values.Int(11), h.Values.Int(12), h.Values.Int(13)
	img := func(c int64) *history.RowImage {
		return &history.RowImage{Cols: []history.Cell{{V: history.Scalar{I: c}}}, Has: []bool{true}}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.SetRowImage(k, v10, img(5)))
	must(h.SetRowImage(k, v11, img(6)))
	must(h.SetRowImage(k, v12, &history.RowImage{Deleted: true}))
	v14 := h.Values.Int(14)
	h.Add(history.Txn{Status: history.Committed, Ops: []history.Op{{Kind: history.Delete, Key: k, Value: v14}}})
	s := NewSchema(h)
	for _, c := range []struct {
		table, where string
		key, val     int32
		want         bool
		err          string
	}{
		{"orders", "w = 1 AND cust = 5", k, v10, true, ""},
		{"orders", "w = 1 AND cust = 5", k, v11, false, ""},
		{"ORDERS", "id >= 7 AND ver = 10", k, v10, true, ""},
		{"orders", "w = 1", k, v12, false, ""},             // deleted
		{"orders", "w = 1", k, history.NoValue, false, ""}, // unborn
		{"orders", "w = 1", k, v13, true, ""},              // key columns need no image
		{"orders", "cust = 5", k, v13, false, "not recorded"},
		{"orders", "w = 1", other, v10, false, "not a row of table orders"},
		{"orders", "k = 1", k, v10, false, "unknown column"},
		{"kv", "k = 'x:1' AND v = 10", other, v10, true, ""},
	} {
		tp := s.Compile(c.table, c.where)
		got, err := tp.Matches(c.key, c.val)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s on %s/%s: error %v, want %q", c.where, h.KeyName(c.key), h.ValueName(c.val), err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s on %s/%s: %v %v, want %v", c.where, h.KeyName(c.key), h.ValueName(c.val), got, err, c.want)
		}
	}
	if tp := s.Compile("orders", "w = 1"); !tp.KeyOnly() || !tp.Member(k) || tp.Member(other) {
		t.Errorf("KeyOnly/Member wrong")
	}
	if tp := s.Compile("orders", "cust = 1"); tp.KeyOnly() {
		t.Errorf("KeyOnly true for a row column")
	}
}

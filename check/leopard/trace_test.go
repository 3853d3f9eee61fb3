package leopard

import (
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	hleopard "github.com/txray/txray/history/leopard"
	"github.com/txray/txray/model"
)

const traceHead = `[
{"threadID":"0","transactionID":"0,1","operationTraceType":"START","startTimestamp":100,"finishTimestamp":110},
{"threadID":"0","transactionID":"0,1","operationTraceType":"SELECT","startTimestamp":120,"finishTimestamp":130,"readTupleList":[{"table":"t","primaryKey":"1","valueMap":{"c0":"5"}}]},
{"threadID":"0","transactionID":"0,1","operationTraceType":"UPDATE","startTimestamp":140,"finishTimestamp":150,"writeTupleList":[{"table":"t","primaryKey":"1","valueMap":{"c0":"6"}}]},
{"threadID":"0","transactionID":"0,1","operationTraceType":"COMMIT","startTimestamp":160,"finishTimestamp":170},
{"threadID":"1","transactionID":"1,1","operationTraceType":"START","startTimestamp":200,"finishTimestamp":201},
{"threadID":"1","transactionID":"1,1","operationTraceType":"SELECT","startTimestamp":202,"finishTimestamp":203,"readTupleList":[{"table":"t","primaryKey":"1","valueMap":{"c0":"`

const traceTail = `"}}]},
{"threadID":"1","transactionID":"1,1","operationTraceType":"COMMIT","startTimestamp":204,"finishTimestamp":205}
]`

// TestLeopardTrace: a Leopard trace decoded by history/leopard (initial
// values unknown: the first read fixes them). The second client began after
// the first committed c0 = 6; reading 5 is a stale read (CR).
func TestLeopardTrace(t *testing.T) {
	for _, c := range []struct {
		read string
		want check.Verdict
	}{{"6", check.Valid}, {"5", check.Invalid}} {
		h, err := hleopard.Decode(strings.NewReader(traceHead+c.read+traceTail), history.DecodeOptions{Name: "t.json"})
		if err != nil {
			t.Fatal(err)
		}
		if r, why := (Checker{}).Applies(h, "oracle:serializable"); r == 0 {
			t.Fatal(why)
		}
		r := run(t, h, "oracle:serializable")
		if r.Verdict != c.want {
			t.Fatalf("read %s: want %s, got %s %v", c.read, c.want, r.Verdict, r.AnomalyTypes)
		}
		if c.want == check.Invalid && !has(r, model.CR) {
			t.Fatalf("want cr, got %v", r.AnomalyTypes)
		}
	}
}

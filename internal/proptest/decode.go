package proptest

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/txray/txray/history"
)

// This file is the scaffolding of the decoders' differential tests: a fast
// path (history/edn, history/ellejson, history/timekiller's fast op
// reader) or a parallel one (edn, timekiller) must give exactly the
// history, or the error, that the decoder's reference path gives on the
// same input (design.md §7, differential tests). Each codec's test drives
// its own switches (fastOff, chunk sizes) and compares with SameDecode.

// SameDecode fails t unless two decodes of in agree: the reference
// decode (want, wantErr: the general reader, the sequential decoder) and
// the one under test (got, gotErr). When either failed, both must have
// failed with the same message and the same kind (history.IsInputError);
// otherwise the histories must be the same to the last id (DiffHistories).
// what names the decode under test in the failure.
func SameDecode(t testing.TB, what string, in []byte, want, got *history.History, wantErr, gotErr error) {
	t.Helper()
	if wantErr != nil || gotErr != nil {
		if wantErr == nil || gotErr == nil || wantErr.Error() != gotErr.Error() {
			t.Fatalf("%s: errors differ on %q:\nreference:  %v\nunder test: %v", what, Abbrev(in), wantErr, gotErr)
		}
		if history.IsInputError(wantErr) != history.IsInputError(gotErr) {
			t.Fatalf("%s: error kinds differ on %q: %T vs %T", what, Abbrev(in), wantErr, gotErr)
		}
		return
	}
	if d := DiffHistories(want, got); d != "" {
		t.Fatalf("%s: histories differ on %q: %s", what, Abbrev(in), d)
	}
}

// Abbrev is b as a string, cut after 300 bytes, for failure messages.
func Abbrev(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// DiffHistories returns "" when a and b are the same history, or else
// their first difference: the header, evidence, ignored-record counts,
// notes, notices, version order and row images, every key, value and
// session id (the interners, in id order), and every transaction
// (reflect.DeepEqual: ids, order, flags, times).
func DiffHistories(a, b *history.History) string {
	if !reflect.DeepEqual(a.Header, b.Header) || a.Evidence != b.Evidence || !reflect.DeepEqual(a.Ignored, b.Ignored) ||
		!reflect.DeepEqual(a.Notes, b.Notes) || !reflect.DeepEqual(a.Notices, b.Notices) {
		return fmt.Sprintf("header/evidence/ignored/notes/notices differ: %+v %+v %v %v %v\nvs %+v %+v %v %v %v",
			a.Header, a.Evidence, a.Ignored, a.Notes, a.Notices, b.Header, b.Evidence, b.Ignored, b.Notes, b.Notices)
	}
	if !reflect.DeepEqual(a.VersionOrder, b.VersionOrder) {
		return fmt.Sprintf("version orders differ: %v\nvs %v", a.VersionOrder, b.VersionOrder)
	}
	if !reflect.DeepEqual(a.RowImages, b.RowImages) {
		return fmt.Sprintf("row images differ: %d vs %d", len(a.RowImages), len(b.RowImages))
	}
	for _, p := range []struct {
		name string
		x, y *history.Interner
	}{{"keys", a.Keys, b.Keys}, {"values", a.Values, b.Values}, {"sessions", a.Sessions, b.Sessions}} {
		if p.x.Len() != p.y.Len() {
			return fmt.Sprintf("%s: %d vs %d", p.name, p.x.Len(), p.y.Len())
		}
		for i := 0; i < p.x.Len(); i++ {
			if p.x.Get(int32(i)) != p.y.Get(int32(i)) {
				return fmt.Sprintf("%s id %d: %v vs %v", p.name, i, p.x.Get(int32(i)), p.y.Get(int32(i)))
			}
		}
	}
	if len(a.Txns) != len(b.Txns) {
		return fmt.Sprintf("%d vs %d txns", len(a.Txns), len(b.Txns))
	}
	for i := range a.Txns {
		if !reflect.DeepEqual(a.Txns[i], b.Txns[i]) {
			return fmt.Sprintf("txn %d: %+v\nvs %+v", i, a.Txns[i], b.Txns[i])
		}
	}
	return ""
}

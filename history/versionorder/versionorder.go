// Package versionorder reads version-order files (`txray check
// --version-order FILE`): evidence of the order in which a database
// installed the versions of some keys, as King Cobra (the seed of txray's
// polygraph work) uses it to speed up and sharpen black-box checking.
//
// Format (UTF-8 text, one key per line):
//
//	# comment lines and blank lines are ignored
//	KEY V1 V2 V3 ...
//
// fields separated by spaces or tabs: the key, then values written to it,
// oldest first. KEY and each V are rendered as the history renders them
// (integers, or strings without whitespace); each must already occur in the
// history (a value must be written to that key by some transaction). The
// order may be partial: keys may be left out, and a line may list only some
// of the key's versions (those listed are ordered; the others are left to
// the checker). A key may appear on one line only, and a value once in it.
//
// Read merges the order into History.VersionOrder (replacing what the
// history carried for those keys) and sets Evidence.VersionOrder.
package versionorder

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

// maxLine bounds one line (a key with millions of versions still fits).
const maxLine = 64 << 20

// ReadFile reads the version-order file name into h.
func ReadFile(name string, h *history.History) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return Read(f, name, h)
}

// Read reads a version-order file from r (named file in errors) into h.
// Errors are *history.InputError naming the line and field.
func Read(r io.Reader, file string, h *history.History) error {
	written := map[[2]int32]bool{} // (key, value) written by some transaction
	for i := range h.Txns {
		for _, o := range h.Txns[i].Ops {
			if o.Kind.IsWrite() && o.Value != history.NoValue { // a delete's tombstone is a version too
				written[[2]int32{o.Key, o.Value}] = true
			}
		}
	}
	orders := map[int32][]int32{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	line := 0
	bad := func(field, format string, args ...any) error {
		return &history.InputError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Fields(text)
		k, ok := lookup(h.Keys, f[0])
		if !ok {
			return bad("key", "key %q does not occur in the history", f[0])
		}
		if _, dup := orders[k]; dup {
			return bad("key", "key %q is listed on more than one line (one chain per key)", f[0])
		}
		seen := map[int32]bool{}
		chain := make([]int32, 0, len(f)-1)
		for j, s := range f[1:] {
			field := "version " + strconv.Itoa(j+1)
			v, ok := lookup(h.Values, s)
			if !ok || !written[[2]int32{k, v}] {
				return bad(field, "value %q is not written to key %q by any transaction of the history", s, f[0])
			}
			if seen[v] {
				return bad(field, "value %q of key %q is listed twice", s, f[0])
			}
			seen[v] = true
			chain = append(chain, v)
		}
		orders[k] = chain
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return &history.InputError{File: file, Line: line + 1, Msg: "line longer than 64 MiB"}
		}
		return err
	}
	if h.VersionOrder == nil {
		h.VersionOrder = map[int32][]int32{}
	}
	for k, c := range orders {
		h.VersionOrder[k] = c
	}
	if len(orders) > 0 {
		h.Evidence.VersionOrder = true
	}
	h.Notes = append(h.Notes, fmt.Sprintf("version order of %d key(s) read from %s", len(orders), file))
	return nil
}

// lookup finds the interned id of a rendered key or value: an integer if it
// parses as one and the history has it as an integer, else a string.
func lookup(in *history.Interner, s string) (int32, bool) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		if id, ok := in.LookupInt(i); ok {
			return id, true
		}
	}
	return in.LookupStr(s)
}

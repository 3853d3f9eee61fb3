package serial

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/txray/txray/history"
)

func ts(p, l int64) history.Timestamp { return history.Timestamp{P: p, L: l, Set: true} }

// TestOrderByTimestampThenIndex: the replay order is (P, L) order, ties
// broken by history index, over the included transactions only.
func TestOrderByTimestampThenIndex(t *testing.T) {
	h := history.New()
	for _, c := range []history.Timestamp{ts(5, 0), ts(3, 1), ts(3, 0), ts(5, 0), ts(1, 0)} {
		h.Add(history.Txn{Status: history.Committed, CommitTS: c})
	}
	got := Order(h, func(i int32, _ *history.Txn) bool { return i != 4 }, func(t *history.Txn) history.Timestamp { return t.CommitTS })
	if want := []int32{2, 1, 0, 3}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// TestStateFrontierAndCollect: the frontier is the last installed version;
// Collect keeps the last version at or before the oldest live timestamp
// and everything after it.
func TestStateFrontierAndCollect(t *testing.T) {
	s := NewState(2)
	if f, ok := s.Frontier(0); ok || f.Writer != -1 || f.Val != history.NoValue || s.Value(0) != history.NoValue {
		t.Fatalf("initial frontier %+v %v", f, ok)
	}
	for i, p := range []int64{1, 2, 3, 4} {
		s.Install(0, Version{TS: ts(p, 0), Writer: int32(i), Val: int32(10 + i)})
	}
	if s.Value(0) != 13 {
		t.Fatalf("value %d", s.Value(0))
	}
	if m := s.Collect(ts(2, 5)); m != 4 {
		t.Fatalf("max versions %d", m)
	}
	var vals []int32
	for _, v := range s.Versions(0) {
		vals = append(vals, v.Val)
	}
	if want := []int32{11, 12, 13}; !slices.Equal(vals, want) {
		t.Fatalf("after collect %v, want %v", vals, want)
	}
}

// TestReplayStopsOnCancel: a cancelled context stops the replay before the
// first step and is returned.
func TestReplayStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	steps := 0
	err := Replay(ctx, []int32{0, 1}, nil, func(x, t int32) { steps++ })
	if !errors.Is(err, context.Canceled) || steps != 0 {
		t.Fatalf("err %v, %d steps", err, steps)
	}
	var pos []int32
	if err := Replay(context.Background(), []int32{7, 3}, nil, func(x, t int32) { pos = append(pos, x, t) }); err != nil || !slices.Equal(pos, []int32{0, 7, 1, 3}) {
		t.Fatalf("steps %v err %v", pos, err)
	}
}

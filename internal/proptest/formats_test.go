package proptest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/txray/txray/check"
	"github.com/txray/txray/history"
	"github.com/txray/txray/history/edn"
	"github.com/txray/txray/history/jsonl"
	"github.com/txray/txray/history/timekiller"
	"github.com/txray/txray/sim"
)

// TestDifferentialFormats: `txray gen` writes one simulated history as
// native JSON Lines, Jepsen EDN or TimeKiller (chronos) JSON (issue 3,
// item 3). Each format keeps the evidence some checker needs (EDN: client
// intervals and outcomes, no timestamps; chronos: timestamps and outcomes,
// no client intervals); every checker that applies to a decoded copy must
// reach the same verdict there as on the in-memory history, since it sees
// the same transactions, outcomes and the evidence it uses. A disagreement
// is a codec or checker bug and fails with the seed.
func TestDifferentialFormats(t *testing.T) {
	fs := []string{"", sim.FaultLostUpdate, sim.FaultStaleRead, sim.FaultAbortedRead, sim.FaultDirtyWrite,
		sim.FaultLostCommit, sim.FaultNoOwnWrite}
	type enc struct {
		name   string
		encode func(*bytes.Buffer, *history.History) error
		decode func(*bytes.Buffer, history.DecodeOptions) (*history.History, error)
	}
	encs := []enc{
		{"jsonl", func(b *bytes.Buffer, h *history.History) error { return jsonl.Encode(b, h) },
			func(b *bytes.Buffer, o history.DecodeOptions) (*history.History, error) { return jsonl.Decode(b, o) }},
		{"edn", func(b *bytes.Buffer, h *history.History) error { return edn.Encode(b, h) },
			func(b *bytes.Buffer, o history.DecodeOptions) (*history.History, error) { return edn.Decode(b, o) }},
		{"chronos", func(b *bytes.Buffer, h *history.History) error { return timekiller.Encode(b, h) },
			func(b *bytes.Buffer, o history.DecodeOptions) (*history.History, error) {
				return timekiller.Decode(b, o)
			}},
	}
	compared := map[string]int{}
	for _, level := range levels() {
		ms := append(LevelModels(level)[:1], LevelProfiles(level)...)
		for _, f := range fs {
			if *flagFault != "" && *flagFault != f {
				continue
			}
			for _, wl := range workloads() {
				for _, seed := range seedRange(900, 2) {
					c := tune(Case{Level: level, Workload: wl, Seed: seed, Info: 0.05})
					if f != "" {
						c.Fault, c.Prob = f, 0.3
					}
					h, _ := gen(t, c)
					ts, _ := Targets(h, ms)
					want := map[Target]check.Verdict{}
					for _, tg := range ts {
						r, err := Run(h, tg)
						if err != nil {
							t.Fatalf("%s %s: %v", c, tg, err)
						}
						want[tg] = r.Verdict
					}
					for _, e := range encs {
						var buf bytes.Buffer
						if err := e.encode(&buf, h); err != nil {
							t.Fatalf("%s: encode %s: %v", c, e.name, err)
						}
						d, err := e.decode(&buf, history.DecodeOptions{Name: e.name, Workload: wl})
						if err != nil {
							t.Fatalf("%s: decode %s: %v\n  reproduce: %s -f %s | txray check -", c, e.name, err, c.GenCommand(), e.name)
						}
						if len(d.Txns) != len(h.Txns) {
							t.Fatalf("%s %s: %d txns decoded, %d generated", c, e.name, len(d.Txns), len(h.Txns))
						}
						// The sim's settings (Targets reads them) travel only in
						// the jsonl header; the others carry the same history.
						d.Header.Extra = h.Header.Extra
						dts, _ := Targets(d, ms)
						for _, tg := range dts {
							w, ok := want[tg]
							if !ok {
								continue // evidence only this format has
							}
							if tg.Checker == "rw-register" && h.Evidence.VersionOrder && !d.Evidence.VersionOrder {
								// rw-register uses the version order only the
								// generated history (and its jsonl copy) carries:
								// compare with its verdict without it.
								wr, err := Run(WithoutVersionOrder(h), tg)
								if err != nil {
									t.Fatalf("%s %s: %v", c, tg, err)
								}
								w = wr.Verdict
							}
							r, err := Run(d, tg)
							if err != nil {
								t.Errorf("%s %s on %s: %v", c, tg, e.name, err)
								continue
							}
							compared[e.name]++
							// rw-register's completion ranks writers by client
							// times or history order, which differ between
							// formats: valid on one copy and unknown for want of a
							// witness order on another is no disagreement.
							completion := tg.Checker == "rw-register" && (completionUnknown(r) && w == check.Valid ||
								r.Verdict == check.Valid && w == check.Unknown && strings.HasPrefix(r.Reason, "valid with a completed version order"))
							if r.Verdict != w && !completion {
								t.Errorf("%s %s: %s on the %s copy, %s on the generated history\n  %s\n  reproduce: %s -f %s | txray check --checker %s --model %s -",
									c, tg, r.Verdict, e.name, w, Explain(r, 2), c.GenCommand(), e.name, tg.Checker, tg.Model)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("verdicts compared per format: %v", compared)
	for _, e := range encs {
		if compared[e.name] == 0 && *flagSeed < 0 {
			t.Errorf("nothing compared for %s", e.name)
		}
	}
}

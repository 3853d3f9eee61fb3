package aion

import "math/rand/v2"

// The filters' hash seed (issue 12).
//
// Three filters answer "may this have been forgotten?" for the checker: the
// filter of forgotten key names (keys.go), the filters of dropped string
// values and of forgotten unknown-outcome writes (values.go), and the
// filter of forgotten session names (sessions.go). Each hashes names or
// values with the checker's seed (Checker.seed). A false positive of any of
// them only ever makes a check unknown (a read or a NoConflict or Session
// check not made, a failing comparison undecided), never a verdict that
// evidence does not support; which names collide depends on the seed.
//
// Production draws the seed at random per checker (New): with a fixed,
// published seed a hostile stream could choose key names, values or
// session names that collide in a filter with forgotten ones and so turn
// checks it wants skipped into unknowns (a denial of the verdict, not a
// false one). With a random seed it cannot aim. Tests and fuzz targets fix
// the seed (Config.seed, set through withSeed), so a failure that depends
// on a false positive replays exactly; the fuzz targets derive it from
// their input. The key table's slot hash (keyTab.seed, maphash) stays
// random: it decides only where a name sits in the table, never a
// verdict.

// newSeed draws a seed at random (see above).
func newSeed() uint64 { return rand.Uint64() }

// withSeed returns cfg with the filters' hash seed fixed to s (tests and
// fuzz targets; see above).
func withSeed(cfg Config, s uint64) Config {
	cfg.seed, cfg.seeded = s, true
	return cfg
}

// fmix64 is splitmix64's finaliser: a bijection that spreads every input
// bit over the output.
func fmix64(x uint64) uint64 {
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}

// seededHash hashes b under seed: deterministic for a given seed (unlike
// hash/maphash, whose seeds cannot be chosen), eight bytes at a time, each
// step a bijection of the state, with fmix64 at the end. It is used only
// by the filters (a name is hashed when it is forgotten and when it is
// looked up), not on the checker's hot path.
func seededHash[T string | []byte](seed uint64, b T) uint64 {
	h := seed ^ uint64(len(b))*0x9E3779B97F4A7C15
	for len(b) >= 8 {
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		h = (h ^ w) * 0xBF58476D1CE4E5B9
		h ^= h >> 29
		b = b[8:]
	}
	if len(b) > 0 {
		var w uint64
		for i := len(b) - 1; i >= 0; i-- {
			w = w<<8 | uint64(b[i])
		}
		h = (h ^ w) * 0xBF58476D1CE4E5B9
		h ^= h >> 29
	}
	return fmix64(h)
}

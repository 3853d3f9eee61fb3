// Package digits parses runs of ASCII decimal digits eight bytes at a time
// (SWAR: SIMD within a register), for the decoders' fast paths, where
// integers (keys, values, list elements, indexes, times) are most of the
// text.
package digits

import (
	"encoding/binary"
	"math/bits"
)

const (
	ones   = 0x0101010101010101
	zeros  = 0x30 * ones // "00000000"
	hiNibs = 0xF0 * ones
)

// run returns how many of v's bytes, lowest first (the order they had in
// the input), are ASCII digits before the first that is not (8 if all
// are). A byte c is a digit when c&0xF0 == 0x30 and (c+6)&0xF0 == 0x30; a
// carry out of a byte of 0xFA or more only disturbs later bytes, which
// follow a non-digit and do not count.
func run(v uint64) int {
	m := (v&hiNibs | ((v+6*ones)&hiNibs)>>4) ^ 0x33*ones
	return bits.TrailingZeros64(m) >> 3
}

// value returns the number the first k (1 to 8) digit bytes of v spell.
// The digits are moved to the high end (the bytes before them become
// leading zeros), then pairs, quadruples and octets are combined.
func value(v uint64, k int) uint64 {
	x := (v - zeros) << (8 * (8 - k))
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	return (x*10000 + x>>32) & 0xFFFFFFFF
}

// Parse reads the digits at b[i:], at most max of them (max <= 18, so the
// result fits an int64), and returns their value and the index after the
// last one read (j == i: no digit at b[i]). Bytes after the run are not
// looked at beyond the eight-byte word holding them.
func Parse(b []byte, i, max int) (n int64, j int) {
	j = i
	if len(b)-i >= 8 && max >= 8 {
		v := binary.LittleEndian.Uint64(b[i:])
		k := run(v)
		if k == 0 {
			return 0, i
		}
		n, j = int64(value(v, k)), i+k
		if k < 8 {
			return n, j
		}
	}
	for j < len(b) && j-i < max && b[j] >= '0' && b[j] <= '9' {
		n = n*10 + int64(b[j]-'0')
		j++
	}
	return n, j
}

// Word parses the digits at the start of the eight bytes v (the input's
// bytes loaded little-endian, lowest first). It returns their value and
// count k; k is 0 when the first byte is not a digit, and 8 when all eight
// are digits (the run may go on: use Parse). Small enough to inline in a
// caller's loop.
func Word(v uint64) (n int64, k int) {
	k = run(v)
	return int64(value(v, k)), k // value(v, 0) is 0: Go shifts by 64 to 0
}

package digits

import (
	"encoding/binary"
	"strconv"
	"testing"
)

// slowParse is the byte-at-a-time reference.
func slowParse(b []byte, i, max int) (n int64, j int) {
	j = i
	for j < len(b) && j-i < max && b[j] >= '0' && b[j] <= '9' {
		n = n*10 + int64(b[j]-'0')
		j++
	}
	return n, j
}

// TestParseTable: digit runs of every length, at every alignment, cut by
// every kind of byte (including those whose +6 carries), and the max cap.
func TestParseTable(t *testing.T) {
	stops := []byte{' ', ',', ']', '}', '\n', '/', ':', '9' + 1, 0, 0x7F, 0xF9, 0xFA, 0xFF, 'a'}
	for l := 0; l <= 20; l++ {
		for _, stop := range stops {
			for pad := 0; pad < 3; pad++ {
				b := make([]byte, pad)
				for k := 0; k < l; k++ {
					b = append(b, byte('1'+(k*7)%9))
				}
				b = append(b, stop, '5', '5', '5', '5', '5', '5', '5', '5')
				for _, max := range []int{18, 8, 3} {
					n, j := Parse(b, pad, max)
					wn, wj := slowParse(b, pad, max)
					if n != wn || j != wj {
						t.Errorf("Parse(%q, %d, %d) = %d, %d; want %d, %d", b, pad, max, n, j, wn, wj)
					}
				}
			}
		}
	}
}

// FuzzParse: Parse agrees with the byte-at-a-time reference.
func FuzzParse(f *testing.F) {
	f.Add([]byte("12345678 "), 0, 18)
	f.Add([]byte("123456789012345678901"), 0, 18)
	f.Add([]byte("x0000000007]"), 1, 18)
	f.Fuzz(func(t *testing.T, b []byte, i, max int) {
		if i < 0 || i > len(b) || max < 0 || max > 18 {
			return
		}
		n, j := Parse(b, i, max)
		wn, wj := slowParse(b, i, max)
		if n != wn || j != wj {
			t.Fatalf("Parse(%q, %d, %d) = %d, %d; want %d, %d", b, i, max, n, j, wn, wj)
		}
		if j > i {
			if v, err := strconv.ParseInt(string(b[i:j]), 10, 64); err != nil || v != n {
				t.Fatalf("%q: %d, strconv %d %v", b[i:j], n, v, err)
			}
		}
	})
}

// TestWord: Word agrees with the byte-at-a-time loop on every run length
// 0 to 8 followed by every kind of stop byte (k == 8 means the run fills
// the word and may go on).
func TestWord(t *testing.T) {
	stops := []byte{' ', ',', ']', '}', '\n', '/', ':', '9' + 1, 0, 0x7F, 0xF9, 0xFA, 0xFF, 'a', '-'}
	for l := 0; l <= 8; l++ {
		for _, stop := range stops {
			b := make([]byte, 0, 16)
			for k := 0; k < l; k++ {
				b = append(b, byte('0'+(k*7+3)%10))
			}
			for len(b) < 8 {
				b = append(b, stop)
			}
			n, k := Word(binary.LittleEndian.Uint64(b))
			wn, wj := slowParse(b, 0, 8)
			if k != wj || (k > 0 && n != wn) || (k == 0 && n != 0) {
				t.Errorf("Word(%q) = %d, %d; want %d, %d", b, n, k, wn, wj)
			}
		}
	}
}

func FuzzWord(f *testing.F) {
	f.Add(uint64(0x3132333435363738))
	f.Add(uint64(0x2c2c2c2c2c2c3131))
	f.Fuzz(func(t *testing.T, v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		n, k := Word(v)
		wn, wj := slowParse(b[:], 0, 8)
		if k != wj || n != wn {
			t.Errorf("Word(%q) = %d, %d; want %d, %d", b, n, k, wn, wj)
		}
	})
}

// Package safetext makes text from untrusted input safe to print in
// messages: control characters (C0, DEL, C1, which terminals interpret as
// escape sequences) and invalid UTF-8 are shown as Go-style escapes, so an
// error message can never move a cursor, recolour a terminal or hide text.
package safetext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every control character and invalid UTF-8 byte
// written as an escape (\n, \t, \x1b, \u0085, \xff); other text, including
// non-ASCII letters, is unchanged. It returns s itself when nothing needs
// escaping.
func Escape(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case isControl(r):
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u0085'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || c >= 0x80 {
			// Non-ASCII needs the slow path only if it is a control or
			// invalid; check properly.
			if c >= 0x80 {
				return cleanUTF8(s[i:])
			}
			return false
		}
	}
	return true
}

func cleanUTF8(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isControl(r) {
			return false
		}
		i += n
	}
	return true
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

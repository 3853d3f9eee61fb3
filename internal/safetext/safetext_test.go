package safetext

import "testing"

func TestEscapeControlBytes(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, é ü 世界":        "plain text, é ü 世界",
		"red \x1b[31mALERT\x1b[0m":  `red \x1b[31mALERT\x1b[0m`,
		"bell\a and nul\x00":        `bell\a and nul\x00`,
		"line\nbreak\ttab\r":        `line\nbreak\ttab\r`,
		"del\x7f":                   `del\x7f`,
		"c1 csi \u009b2J":           `c1 csi \u009b2J`,
		"raw byte \x9b2J, bad \xff": `raw byte \x9b2J, bad \xff`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzEscape(f *testing.F) {
	f.Add("a\x1b[2Jb\xff\u0085")
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		if !clean(out) {
			t.Fatalf("Escape(%q) = %q still holds a control or invalid byte", s, out)
		}
	})
}

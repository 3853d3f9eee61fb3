package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeFileEmptyInputSaysEmpty: an empty (or blank) file under
// --format auto is an input error that says the input is empty, naming the
// file, rather than sending the user to --format; an unrecognisable
// non-empty file still asks for --format.
func TestDecodeFileEmptyInputSaysEmpty(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"empty", "", "the input is empty"},
		{"blank-lines", "\n \t\n\r\n", "the input is empty"},
		{"garbage", "garbage\n", "cannot tell the format"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".txt")
			if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := DecodeFile(p, "auto", DecodeOptions{})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T), want an InputError", err, err)
			}
			if ie.File != p || ie.Line != 1 || !strings.Contains(ie.Msg, c.want) {
				t.Errorf("got %q at %s:%d, want %q at %s:1", ie.Msg, ie.File, ie.Line, c.want, p)
			}
		})
	}
}

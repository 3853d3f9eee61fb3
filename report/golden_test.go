package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from current output")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file (go test ./report -run %s -update to accept):\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

func sortedNames(m map[string]*Input) []string {
	var ns []string
	for n := range m {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

func TestTextGolden(t *testing.T) {
	ins := allInputs()
	for _, name := range sortedNames(ins) {
		for _, verbose := range []bool{false, true} {
			suffix := ".txt"
			if verbose {
				suffix = ".verbose.txt"
			}
			t.Run(name+suffix, func(t *testing.T) {
				var b bytes.Buffer
				if err := WriteText(&b, ins[name], verbose); err != nil {
					t.Fatal(err)
				}
				golden(t, name+suffix, b.Bytes())
			})
		}
	}
}

func TestJSONGolden(t *testing.T) {
	ins := allInputs()
	for _, name := range sortedNames(ins) {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteJSON(&b, ins[name]); err != nil {
				t.Fatal(err)
			}
			line := b.Bytes()
			if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
				t.Fatalf("WriteJSON must write exactly one line, got %q", line)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, line, "", "  "); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".json", pretty.Bytes())
		})
	}
}

// The text report must not pass terminal escapes from the history through.
func TestTextEscapesControlCharacters(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteText(&b, hostileInput(), verbose); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsRune(b.String(), 0x1b) {
			t.Fatalf("verbose=%v: raw ESC in text output:\n%s", verbose, b.String())
		}
		if !strings.Contains(b.String(), `\x1b[2J`) {
			t.Fatalf("verbose=%v: escaped ESC missing:\n%s", verbose, b.String())
		}
	}
}

func TestWrap(t *testing.T) {
	long := strings.Repeat("word ", 50)
	for _, l := range wrap(long, 30) {
		if len(l) > 30 {
			t.Fatalf("line longer than width: %q", l)
		}
	}
	huge := strings.Repeat("x", 80)
	if got := wrap("a "+huge+" b", 30); len(got) != 3 || got[1] != huge {
		t.Fatalf("long word not on its own line: %q", got)
	}
	if got := wrap("", 30); len(got) != 1 || got[0] != "" {
		t.Fatalf("empty: %q", got)
	}
}

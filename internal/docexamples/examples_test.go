package docexamples

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// example is one command of an `sh` block.
type example struct {
	file string
	line int
	cmd  string
}

// extract returns the commands of the `sh` blocks of a Markdown file, one
// per line (a trailing backslash continues a command), grouped by block.
func extract(path string) ([][]example, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks [][]example
	var cur []example
	in := false
	cont := ""
	contLine := 0
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") {
			if in {
				blocks = append(blocks, cur)
				cur, in = nil, false
			} else if strings.TrimSpace(strings.TrimPrefix(t, "```")) == "sh" {
				in = true
			}
			continue
		}
		if !in || (cont == "" && (t == "" || strings.HasPrefix(t, "#"))) {
			continue
		}
		if cont == "" {
			contLine = n
		}
		if strings.HasSuffix(t, "\\") {
			cont += strings.TrimSuffix(t, "\\") + " "
			continue
		}
		cur = append(cur, example{file: filepath.Base(path), line: contLine, cmd: cont + t})
		cont = ""
	}
	return blocks, sc.Err()
}

func reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// prepare returns the command to run for e, or a reason to skip it.
func prepare(e example) (cmd, skip string) {
	c := e.cmd
	switch {
	case strings.HasPrefix(c, "go build -o txray ./cmd/txray"):
		return "", "the test built ./txray from this checkout already"
	case strings.HasPrefix(c, "go install"):
		return "", "go install writes into GOPATH/bin"
	case strings.HasPrefix(c, "go test"):
		return "", "go test is what runs this test"
	case strings.Contains(c, ".ci/run"):
		return "", ".ci/run reconfigures and restarts the database servers"
	}
	if strings.Contains(c, "postgres://") && !reachable("127.0.0.1:5432") {
		return "", "needs PostgreSQL at 127.0.0.1:5432, not reachable"
	}
	if strings.Contains(c, "mysql://") && !reachable("127.0.0.1:3306") {
		return "", "needs MariaDB/MySQL at 127.0.0.1:3306, not reachable"
	}
	c = strings.ReplaceAll(c, "go run ./cmd/txray", "./txray")
	return c, ""
}

func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found from %s: %v", root, err)
	}
	return root
}

// TestExamples runs every `sh` example of README.md and docs/*.md.
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the examples build txray and run workloads")
	}
	root := repoRoot(t)
	files := []string{filepath.Join(root, "README.md")}
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, d := range docs {
		if filepath.Base(d) != "design.md" {
			files = append(files, d)
		}
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "txray"), "./cmd/txray")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ran := 0
	for _, file := range files {
		blocks, err := extract(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) == 0 {
			continue
		}
		// One scratch directory per file: a block's commands may use
		// what earlier ones wrote (gen, then check).
		dir := t.TempDir()
		ents, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			// The clone's files, as links: what examples write lands in
			// the scratch directory, what they read is the checkout's.
			if n := e.Name(); n != ".git" && n != "txray" && n != "txray-runs" {
				if err := os.Symlink(filepath.Join(root, n), filepath.Join(dir, n)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := os.Symlink(filepath.Join(bin, "txray"), filepath.Join(dir, "txray")); err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			for _, e := range b {
				name := e.file + ":" + itoa(e.line)
				t.Run(name, func(t *testing.T) {
					c, skip := prepare(e)
					if skip != "" {
						t.Skipf("%s: %s", e.cmd, skip)
					}
					ran++
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					defer cancel()
					cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", c)
					cmd.Dir = dir
					cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
					out, err := cmd.CombinedOutput()
					code := 0
					if err != nil {
						ee, ok := err.(*exec.ExitError)
						if !ok {
							t.Fatalf("%s: %v", e.cmd, err)
						}
						code = ee.ExitCode()
					}
					switch code {
					case 0, 1, 3:
					default:
						t.Errorf("%s (%s) exited %d, want a verdict exit code (0, 1 or 3):\n%s", e.cmd, name, code, tail(out))
					}
				})
			}
		}
	}
	if ran < 5 {
		t.Errorf("only %d examples ran; the README's own should be more", ran)
	}
}

// TestExtract: continuation lines, comments and untagged blocks.
func TestExtract(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.md")
	md := "text\n```sh\n# comment\n./txray check \\\n  a.jsonl\n\n./txray version\n```\n```\nnot run\n```\n```json\n{}\n```\n"
	if err := os.WriteFile(p, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := extract(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range bs {
		for _, e := range b {
			got = append(got, itoa(e.line)+" "+e.cmd)
		}
	}
	want := []string{"4 ./txray check  a.jsonl", "7 ./txray version"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("extract = %q, want %q", got, want)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func tail(b []byte) string {
	s := string(b)
	if len(s) > 3000 {
		s = "...\n" + s[len(s)-3000:]
	}
	return s
}

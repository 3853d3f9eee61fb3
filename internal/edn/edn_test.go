package edn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, src string, json bool) []string {
	t.Helper()
	var out []string
	for _, small := range []bool{false, true} {
		var rd *Reader
		if small {
			// One byte at a time exercises every buffer refill path.
			rd = NewReader(iotest.OneByteReader(strings.NewReader(src)))
			rd.buf = make([]byte, 1)
		} else {
			rd = NewBytesReader([]byte(src))
		}
		rd.JSON = json
		var got []string
		for {
			v, err := rd.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%q (small=%v): %v", src, small, err)
			}
			got = append(got, v.Kind.String()+" "+v.String())
		}
		if small && strings.Join(got, "|") != strings.Join(out, "|") {
			t.Fatalf("%q: byte-at-a-time read %q, whole read %q", src, got, out)
		}
		out = got
	}
	return out
}

func TestSyntax(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"nil true false", "nil true false", []string{"nil nil", "boolean true", "boolean false"}},
		{"integers", "0 42 -7 +3 12N 9223372036854775807", []string{"integer 0", "integer 42", "integer -7", "integer 3", "integer 12", "integer 9223372036854775807"}},
		{"big integers", "99999999999999999999 -99999999999999999999N", []string{"big integer 99999999999999999999N", "big integer -99999999999999999999N"}},
		{"floats", "1.5 -2.0 1e3 2.5M ##Inf ##-Inf", []string{"float 1.5", "float -2.0", "float 1000.0", "float 2.5", "float ##Inf", "float ##-Inf"}},
		{"ratio", "1/2", []string{"ratio 1/2"}},
		{"strings", `"a" "tab\there" "q\"uote" "back\\slash" "nl\n" "\u00e9" "multi
line"`, []string{`string "a"`, `string "tab\there"`, `string "q\"uote"`, `string "back\\slash"`, `string "nl\n"`, `string "é"`, `string "multi\nline"`}},
		{"characters", `\c \newline \space \tab \u0041 \( \é`, []string{`character \c`, `character \newline`, `character \space`, `character \tab`, `character \A`, `character \(`, `character \é`}},
		{"keywords", ":a :txn :ns/name :a.b/c-d? ::auto", []string{"keyword :a", "keyword :txn", "keyword :ns/name", "keyword :a.b/c-d?", "keyword :auto"}},
		{"symbols", "foo a.b/c + - ... <=>", []string{"symbol foo", "symbol a.b/c", "symbol +", "symbol -", "symbol ...", "symbol <=>"}},
		{"collections", "[1 2] (3) {:a 1, :b [2]} #{4} [] {}", []string{"vector [1 2]", "list (3)", "map {:a 1, :b [2]}", "set #{4}", "vector []", "map {}"}},
		{"commas are white space", "[1,2,,3]", []string{"vector [1 2 3]"}},
		{"comments", "; a comment\n1 ; trailing\n;last", []string{"integer 1"}},
		{"discard", "#_ 1 2 [#_ x 3 #_#_ 4 5]", []string{"integer 2", "vector [3]"}},
		{"tagged literal", `#inst "2020-01-01T00:00:00Z" #uuid "abc"`, []string{`tagged value #inst "2020-01-01T00:00:00Z"`, `tagged value #uuid "abc"`}},
		{"record", "#jepsen.history.Op{:index 0, :type :ok}", []string{"tagged value #jepsen.history.Op{:index 0, :type :ok}"}},
		{"namespaced map", "#:a{:b 1 :c/d 2}", []string{"map {:a/b 1, :c/d 2}"}},
		{"metadata skipped", "^{:m 1} [1]", []string{"vector [1]"}},
		{"nested", "{:value [[:append 1 2] [:r 3 nil]]}", []string{"map {:value [[:append 1 2] [:r 3 nil]]}"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := readAll(t, c.src, false)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("%q:\n got %q\nwant %q", c.src, got, c.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	got := readAll(t, `[{"index":3,"process":1,"type":"ok","value":[["append",255,8],["r",253,null]],"x":true,"s":"a\/b\ud83d\ude00"}]`, true)
	want := `vector [{"index" 3, "process" 1, "type" "ok", "value" [["append" 255 8] ["r" 253 nil]], "x" true, "s" "a/b😀"}]`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestGet(t *testing.T) {
	rd := NewBytesReader([]byte(`#jepsen.history.Op{:type :ok "f" "txn"}`))
	v, err := rd.Read()
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := v.Get("type").Name(); s != "ok" {
		t.Errorf("type = %q", s)
	}
	if s, _ := v.Get("f").Name(); s != "txn" {
		t.Errorf("f = %q", s)
	}
	if v.Get("missing") != nil {
		t.Error("missing key found")
	}
}

func TestFloatValue(t *testing.T) {
	rd := NewBytesReader([]byte("1/4 ##NaN 2.5"))
	want := []float64{0.25, math.NaN(), 2.5}
	for _, w := range want {
		v, err := rd.Read()
		if err != nil {
			t.Fatal(err)
		}
		if f := v.F(); !(f == w || math.IsNaN(w) && math.IsNaN(f)) {
			t.Errorf("%s: F() = %v, want %v", v, f, w)
		}
	}
}

func TestPositions(t *testing.T) {
	rd := NewBytesReader([]byte("; c\n  {:a 1}\n\t[x\n  y]"))
	v, _ := rd.Read()
	if v.Line != 2 || v.Col != 3 {
		t.Errorf("map at %d:%d, want 2:3", v.Line, v.Col)
	}
	v, _ = rd.Read()
	if v.Line != 3 || v.Col != 2 || v.Items[1].Line != 4 || v.Items[1].Col != 3 {
		t.Errorf("vector at %d:%d, y at %d:%d", v.Line, v.Col, v.Items[1].Line, v.Items[1].Col)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"unclosed vector", "[1 2\n 3", 1, 1, "never closed"},
		{"unclosed string", "\n  \"abc", 2, 3, "never closed"},
		{"stray closer", "1 ]", 1, 3, "unexpected"},
		{"odd map", "{:a 1 :b}", 1, 1, "odd number"},
		{"bad number", "\n\n 12abc", 3, 2, "invalid number"},
		{"bad escape", `"a\qb"`, 1, 5, "escape"},
		{"bad char", `\nope`, 1, 1, "character"},
		{"bad dispatch", "#(", 1, 2, "dispatch"},
		{"bad unicode", `"\u12"`, 1, 4, "hex"},
		{"hex number", "0x10", 1, 1, "invalid number"},
		{"empty keyword", ": ", 1, 1, "empty keyword"},
		{"discard at end", "#_", 1, 3, "end of input"},
		{"tag at end", "#inst", 1, 6, "end of input"},
		{"unknown symbolic", "##Foo", 1, 6, "symbolic"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rd := NewBytesReader([]byte(c.src))
			var err error
			for err == nil {
				_, err = rd.Read()
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("%q: got %v, want a SyntaxError", c.src, err)
			}
			if se.Line != c.line || se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
				t.Errorf("%q: got %d:%d %q, want %d:%d containing %q", c.src, se.Line, se.Col, se.Msg, c.line, c.col, c.msg)
			}
		})
	}
}

func TestDeepNesting(t *testing.T) {
	src := strings.Repeat("[", MaxDepth+5)
	_, err := NewBytesReader([]byte(src)).Read()
	if err == nil || !strings.Contains(err.Error(), "nesting") {
		t.Fatalf("got %v, want a nesting error", err)
	}
}

func TestPeekSkip(t *testing.T) {
	rd := NewBytesReader([]byte(" #_0 [ {:a 1} {:a 2} ]"))
	c, err := rd.Peek()
	if err != nil || c != '[' {
		t.Fatalf("Peek = %q, %v", c, err)
	}
	rd.Skip()
	var n int
	for {
		c, err := rd.Peek()
		if err != nil {
			t.Fatal(err)
		}
		if c == ']' {
			break
		}
		v, err := rd.Read()
		if err != nil {
			t.Fatal(err)
		}
		n++
		if v.Get("a").I != int64(n) {
			t.Errorf("item %d = %s", n, v)
		}
	}
	if n != 2 {
		t.Errorf("read %d items", n)
	}
}

func TestRoundTripString(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"\\\n\t\r\x01", "é😀"} {
		b := AppendString(nil, s)
		v, err := NewBytesReader(b).Read()
		if err != nil || v.Str != s {
			t.Errorf("%q -> %s -> %q, %v", s, b, v.Str, err)
		}
	}
}

func FuzzEDN(f *testing.F) {
	for _, s := range []string{"nil", "[1 2 {:a \"b\"}]", "#jepsen.history.Op{:index 0}", `\newline`, "#_ 1 2", "1/2 3N 4.5M",
		"; c\n(1 #{2})", `"\u00e9\n"`, "##Inf", "#:a{:b 1}", "^:m x", `{"a":null}`} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, json bool) {
		// Read the input twice: from one buffer (fast paths) and one byte at
		// a time (every refill path); both must give the same values and
		// the same error position.
		read := func(rd *Reader) string {
			rd.JSON = json
			var out []string
			for i := 0; i < 1000; i++ {
				v, err := rd.Read()
				if err != nil {
					if err != io.EOF {
						var se *SyntaxError
						if !errors.As(err, &se) {
							t.Fatalf("non-syntax error %v", err)
						}
						out = append(out, fmt.Sprintf("error at %d:%d", se.Line, se.Col))
					}
					break
				}
				out = append(out, v.String())
			}
			return strings.Join(out, "|")
		}
		whole := read(NewBytesReader(b))
		small := NewReader(iotest.OneByteReader(bytes.NewReader(b)))
		small.buf = make([]byte, 1)
		if got := read(small); got != whole {
			t.Fatalf("byte-at-a-time read %q, whole read %q", got, whole)
		}
	})
}

func BenchmarkRead(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		sb.WriteString(`{:index 1234, :time 123456789, :type :ok, :process 7, :f :txn, :value [[:append 12 345] [:r 13 [1 2 3 4 5 6 7 8]] [:r 14 nil]]}` + "\n")
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rd := NewReader(bytes.NewReader(data))
		for {
			if _, err := rd.Read(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// TestSurrogatePairAcrossRefill: a \u high surrogate is paired with the
// next \u escape by peeking at it; a refill while peeking moves the
// buffer, so a saved position must not be restored after it (byte-at-a-time
// reads gave a different value and error position than whole reads:
// FuzzEDN input 2475dadf9e133d4d).
func TestSurrogatePairAcrossRefill(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"\ud83d\ude00"`, "\"\U0001F600\""},
		{`"\ud800\u0041"`, "\"\uFFFDA\""},
		{`"\ud800\u`, "error at 1:10"},
		{`"\ud800\ud8`, "error at 1:10"},
	} {
		for _, oneByte := range []bool{false, true} {
			rd := NewBytesReader([]byte(c.in))
			if oneByte {
				rd = NewReader(iotest.OneByteReader(strings.NewReader(c.in)))
				rd.buf = make([]byte, 1)
			}
			rd.JSON = true
			got := ""
			v, err := rd.Read()
			if se := (*SyntaxError)(nil); errors.As(err, &se) {
				got = fmt.Sprintf("error at %d:%d", se.Line, se.Col)
			} else if err != nil {
				t.Fatalf("%q: %v", c.in, err)
			} else {
				got = v.String()
			}
			if got != c.want {
				t.Errorf("%q (one byte at a time %v): got %s, want %s", c.in, oneByte, got, c.want)
			}
		}
	}
}

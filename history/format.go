package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/txray/txray/internal/safetext"
)

// InputError is a decoding error that names where the input is wrong:
// the file, the 1-based line (0 if not line-oriented), the field, and what is
// wrong. Every decoder returns InputError for bad input so the CLI can exit 2
// with a precise message.
type InputError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error renders "file:line: field: message". Control characters and invalid
// UTF-8 (from the input, echoed in the message or the file name) are
// escaped (internal/safetext), so a hostile input cannot send terminal
// escape sequences through an error message.
func (e *InputError) Error() string {
	return safetext.Escape(e.raw())
}

func (e *InputError) raw() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("<input>")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errorf builds an InputError.
func Errorf(file string, line int, field, format string, args ...any) *InputError {
	return &InputError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// IsInputError reports whether err is (or wraps) an InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// DecodeOptions tune decoders.
type DecodeOptions struct {
	// Name is the file name used in error messages.
	Name string
	// Workload hints the data model when a format cannot tell
	// ("list-append" or "rw-register"); empty means infer.
	Workload string
	// SizeHint is the input's size in bytes when known (DecodeFile sets it),
	// so decoders can presize their tables.
	SizeHint int64
	// Progress, when set, is called by DecodeFile with the number of input
	// bytes the decoder has read so far (out of SizeHint when known), at
	// most once per read from the file. It may be called from any goroutine
	// the decoder reads on, one call at a time. Decoders ignore it.
	Progress func(read int64)
}

// progressReader reports the bytes read through it to DecodeOptions.Progress.
type progressReader struct {
	r  io.Reader
	n  int64
	fn func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.n += int64(n)
		p.fn(p.n)
	}
	return n, err
}

// Format is a registered history codec.
type Format struct {
	// Name is the --format name.
	Name string
	// Doc is a one-line description.
	Doc string
	// Sniff scores how likely prefix (the first bytes of a file, up to 64 KiB)
	// is in this format: 0 = no, higher = more confident (max 100).
	Sniff func(prefix []byte) int
	// Decode reads a whole history from r.
	Decode func(r io.Reader, opts DecodeOptions) (*History, error)
	// DecodeDir, optional, reads a history from a directory of files.
	DecodeDir func(dir string, opts DecodeOptions) (*History, error)
	// SniffDir, optional, scores a directory.
	SniffDir func(dir string) int
	// Mapped reports that Decode keeps MappedInput's contract, so
	// DecodeFile may hand it a big regular file mapped into memory
	// instead of reading it.
	Mapped bool
}

var (
	fmtMu   sync.RWMutex
	formats = map[string]*Format{}
)

// RegisterFormat adds a codec; codec packages call it from init.
func RegisterFormat(f Format) {
	fmtMu.Lock()
	defer fmtMu.Unlock()
	formats[f.Name] = &f
}

// Formats lists registered format names, sorted.
func Formats() []string {
	fmtMu.RLock()
	defer fmtMu.RUnlock()
	var ns []string
	for n := range formats {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// LookupFormat returns a registered codec.
func LookupFormat(name string) (*Format, bool) {
	fmtMu.RLock()
	defer fmtMu.RUnlock()
	f, ok := formats[name]
	return f, ok
}

// Sniff picks the most confident registered format for prefix; "" if none.
func Sniff(prefix []byte) string {
	fmtMu.RLock()
	defer fmtMu.RUnlock()
	best, bestScore := "", 0
	for _, n := range sortedNames() {
		f := formats[n]
		if f.Sniff == nil {
			continue
		}
		if s := f.Sniff(prefix); s > bestScore {
			best, bestScore = n, s
		}
	}
	return best
}

func sortedNames() []string {
	var ns []string
	for n := range formats {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// DecodeFile decodes path ("-" is stdin) in format ("" or "auto" sniffs).
// A directory is handed to a format with DecodeDir.
func DecodeFile(path, format string, opts DecodeOptions) (*History, error) {
	if opts.Name == "" {
		opts.Name = path
		if path == "-" {
			opts.Name = "<stdin>"
		}
	}
	if path != "-" {
		if st, err := os.Stat(path); err != nil {
			return nil, err
		} else if st.IsDir() {
			return decodeDir(path, format, opts)
		}
	}
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			opts.SizeHint = st.Size()
			if m := mapFile(f, st.Size()); m != nil {
				prefix := m.b[:min(len(m.b), 64<<10)]
				if fm, ok := LookupFormat(sniffed(prefix, format)); ok && fm.Mapped {
					// The decoder reads the file in place
					// (MappedInput); unmapped once it has returned.
					defer m.close()
					m.progress = opts.Progress
					return decodeFrom(m, prefix, format, opts)
				}
				m.close()
			}
		}
		r = f
	}
	if opts.Progress != nil {
		r = &progressReader{r: r, fn: opts.Progress}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	var prefix []byte
	if format == "" || format == "auto" {
		prefix, _ = br.Peek(64 << 10)
	}
	return decodeFrom(br, prefix, format, opts)
}

// sniffed is format, or for "" and "auto" the format Sniff picks for
// prefix.
func sniffed(prefix []byte, format string) string {
	if format == "" || format == "auto" {
		return Sniff(prefix)
	}
	return format
}

// decodeFrom decodes r in format, sniffing prefix (r's first bytes) when
// format is "" or "auto".
func decodeFrom(r io.Reader, prefix []byte, format string, opts DecodeOptions) (*History, error) {
	if format == "" || format == "auto" {
		format = sniffed(prefix, format)
		if format == "" && len(bytes.TrimSpace(prefix)) == 0 {
			// "pass --format" would send the user after the wrong cause.
			return nil, &InputError{File: opts.Name, Line: 1, Msg: "the input is empty: no history to check"}
		}
		if format == "" {
			return nil, &InputError{File: opts.Name, Line: 1, Msg: "cannot tell the format; pass --format (one of " + strings.Join(Formats(), ", ") + ")"}
		}
	}
	f, ok := LookupFormat(format)
	if !ok || f.Decode == nil {
		return nil, fmt.Errorf("unknown format %q (known: %s)", format, strings.Join(Formats(), ", "))
	}
	h, err := f.Decode(r, opts)
	if err != nil {
		return nil, err
	}
	if h.Header.Format == "" {
		h.Header.Format = format
	}
	return h, nil
}

func decodeDir(dir, format string, opts DecodeOptions) (*History, error) {
	fmtMu.RLock()
	var pick *Format
	if format != "" && format != "auto" {
		pick = formats[format]
	} else {
		best := 0
		for _, n := range sortedNames() {
			f := formats[n]
			if f.SniffDir == nil {
				continue
			}
			if s := f.SniffDir(dir); s > best {
				best, pick = s, f
			}
		}
	}
	fmtMu.RUnlock()
	if pick == nil || pick.DecodeDir == nil {
		return nil, &InputError{File: dir, Msg: "is a directory, and no format that reads directories recognises it"}
	}
	h, err := pick.DecodeDir(dir, opts)
	if err == nil && h.Header.Format == "" {
		h.Header.Format = pick.Name
	}
	return h, err
}

// TrimBOMAndSpace returns prefix without a UTF-8 BOM and leading white space;
// a helper for Sniff functions.
func TrimBOMAndSpace(prefix []byte) []byte {
	prefix = bytes.TrimPrefix(prefix, []byte("\xef\xbb\xbf"))
	return bytes.TrimLeft(prefix, " \t\r\n")
}

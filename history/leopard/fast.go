package leopard

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// The fast scanner reads the shape Leopard (Gson) and Encode write: a JSON
// array (or a stream) of flat record objects whose fields are strings,
// integers, null, and tuple lists of {table, primaryKey, valueMap}
// objects, without reflection, and hands each record to the same
// builder.record as the general reader (encoding/json, builder.file), in
// the same order, so the history, the counters and the errors are the
// same. It leaves to the general reader (fast returns ok = false, and the
// caller starts the file, or directory, over with it) everything it does
// not decode exactly as encoding/json would: any syntax error, a value of
// an unexpected type, a duplicate field or column, a field name that
// matches a known one only case-insensitively or is escaped, a timestamp
// that is not an int64. Strings with escapes or non-ASCII bytes are
// unquoted by encoding/json itself. FuzzFastMatchesGeneral and
// TestFastMatchesGeneral hold the two readers to the same result.

// fastScan is the scanner's position in one file.
type fastScan struct {
	d   []byte
	i   int
	bad bool // the input needs the general reader
	// Scratch reused from record to record (builder.record keeps none of
	// it): timestamps, tuple lists, columns, and a cache of the strings
	// that repeat (thread and transaction ids, keys).
	ts    [2]int64
	tl    [2][]tuple
	cols  []colVal
	cache map[string]string
}

func (s *fastScan) ws() {
	for s.i < len(s.d) {
		switch s.d[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (s *fastScan) peek() byte {
	s.ws()
	if s.i < len(s.d) {
		return s.d[s.i]
	}
	return 0
}

func (s *fastScan) eat(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	s.bad = true
	return false
}

// rawString scans a string at s.i (the opening quote) and returns its
// contents, and whether they need unquoting (escapes or non-ASCII bytes).
func (s *fastScan) rawString() (raw []byte, complex bool) {
	if s.peek() != '"' {
		s.bad = true
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.d); j++ {
		c := s.d[j]
		switch {
		case c == '"':
			s.i = j + 1
			return s.d[start:j], complex
		case c == '\\':
			complex = true
			j++ // the escaped byte (validated by encoding/json below)
		case c < 0x20:
			s.bad = true
			return nil, false
		case c >= 0x80:
			complex = true
		}
	}
	s.bad = true
	return nil, false
}

// str returns a string value as encoding/json decodes it.
func (s *fastScan) str() string {
	start := s.i
	raw, complex := s.rawString()
	if s.bad {
		return ""
	}
	if complex {
		var v string
		if err := json.Unmarshal(s.d[start:s.i], &v); err != nil {
			s.bad = true
		}
		return v
	}
	return s.intern(raw)
}

// intern returns string(b), shared with earlier occurrences (a bounded
// cache: ids and keys repeat from record to record).
func (s *fastScan) intern(b []byte) string {
	if len(b) > 64 {
		return string(b)
	}
	if v, ok := s.cache[string(b)]; ok {
		return v
	}
	v := constString(b)
	if s.cache == nil || len(s.cache) >= 1<<14 {
		s.cache = make(map[string]string, 1<<10)
	}
	s.cache[v] = v
	return v
}

// constString returns the common field values without allocating.
func constString(b []byte) string {
	switch string(b) {
	case "START":
		return "START"
	case "SELECT":
		return "SELECT"
	case "UPDATE":
		return "UPDATE"
	case "INSERT":
		return "INSERT"
	case "DELETE":
		return "DELETE"
	case "COMMIT":
		return "COMMIT"
	case "ROLLBACK":
		return "ROLLBACK"
	case "NON_LOCK":
		return "NON_LOCK"
	case "CONSISTENT_READ":
		return "CONSISTENT_READ"
	case "EXCLUSIVE_LOCK":
		return "EXCLUSIVE_LOCK"
	case "SHARE_LOCK":
		return "SHARE_LOCK"
	case "t":
		return "t"
	case "v":
		return "v"
	}
	return string(b)
}

// number scans a JSON number (RFC 8259 grammar) and returns its text.
func (s *fastScan) number() []byte {
	d, j := s.d, s.i
	start := j
	if j < len(d) && d[j] == '-' {
		j++
	}
	switch {
	case j < len(d) && d[j] == '0':
		j++
	case j < len(d) && d[j] >= '1' && d[j] <= '9':
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
	default:
		s.bad = true
		return nil
	}
	if j < len(d) && d[j] == '.' {
		j++
		k := j
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
		if j == k {
			s.bad = true
			return nil
		}
	}
	if j < len(d) && (d[j] == 'e' || d[j] == 'E') {
		j++
		if j < len(d) && (d[j] == '+' || d[j] == '-') {
			j++
		}
		k := j
		for j < len(d) && d[j] >= '0' && d[j] <= '9' {
			j++
		}
		if j == k {
			s.bad = true
			return nil
		}
	}
	s.i = j
	return d[start:j]
}

// lit scans the literal word (true, false, null).
func (s *fastScan) lit(word string) bool {
	if len(s.d)-s.i >= len(word) && string(s.d[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	s.bad = true
	return false
}

// null consumes a null if one is next.
func (s *fastScan) null() bool {
	if s.peek() == 'n' {
		return s.lit("null")
	}
	return false
}

// scalar reads a string, number, boolean or null as scalar.UnmarshalJSON
// does; objects and arrays need the general reader (an error there).
func (s *fastScan) scalar() scalar {
	switch c := s.peek(); {
	case c == '"':
		return scalar{S: s.str(), Set: true}
	case c == 'n':
		s.lit("null")
		return scalar{}
	case c == 't':
		s.lit("true")
		return scalar{S: "true", Set: true}
	case c == 'f':
		s.lit("false")
		return scalar{S: "false", Set: true}
	case c == '-' || (c >= '0' && c <= '9'):
		return scalar{S: constString(s.number()), Set: true, IsNum: true}
	}
	s.bad = true
	return scalar{}
}

// value reads a valueMap value: as scalar, but an integer that fits
// int64 is kept parsed (builder.record would parse it) instead of as text.
func (s *fastScan) value() scalar {
	if c := s.peek(); c == '-' || (c >= '0' && c <= '9') {
		num := s.number()
		if n, err := strconv.ParseInt(string(num), 10, 64); err == nil {
			return scalar{Set: true, IsNum: true, n: n, hasN: true}
		}
		return scalar{S: string(num), Set: true, IsNum: true}
	}
	return s.scalar()
}

// stringField reads a string-typed field (null leaves it empty).
func (s *fastScan) stringField() string {
	if s.null() {
		return ""
	}
	return s.str()
}

// timestamp reads an *int64 field into slot.
func (s *fastScan) timestamp(slot *int64) *int64 {
	if s.null() {
		return nil
	}
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		s.bad = true
		return nil
	}
	n, err := strconv.ParseInt(string(s.number()), 10, 64)
	if err != nil {
		s.bad = true
		return nil
	}
	*slot = n
	return slot
}

// skip scans (validates) any JSON value.
func (s *fastScan) skip(depth int) {
	if depth > 64 {
		s.bad = true
		return
	}
	switch c := s.peek(); {
	case c == '"':
		s.rawString()
	case c == '{':
		s.i++
		if s.peek() == '}' {
			s.i++
			return
		}
		for !s.bad {
			s.rawString()
			s.eat(':')
			s.skip(depth + 1)
			if s.peek() == ',' {
				s.i++
				continue
			}
			s.eat('}')
			return
		}
	case c == '[':
		s.i++
		if s.peek() == ']' {
			s.i++
			return
		}
		for !s.bad {
			s.skip(depth + 1)
			if s.peek() == ',' {
				s.i++
				continue
			}
			s.eat(']')
			return
		}
	case c == 't':
		s.lit("true")
	case c == 'f':
		s.lit("false")
	case c == 'n':
		s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		s.number()
	default:
		s.bad = true
	}
}

// object scans an object, calling field for each member (the scanner is
// before the value); field returns false for a name it does not know. A
// name that needs unquoting, or that a known one matches only ignoring
// case (encoding/json would fill that field), needs the general reader.
func (s *fastScan) object(known []string, field func(name []byte) bool) {
	if !s.eat('{') {
		return
	}
	if s.peek() == '}' {
		s.i++
		return
	}
	for !s.bad {
		name, complex := s.rawString()
		if complex {
			s.bad = true
		}
		if !s.eat(':') {
			return
		}
		if !field(name) {
			for _, k := range known {
				if strings.EqualFold(k, string(name)) {
					s.bad = true
				}
			}
			s.skip(0)
		}
		if s.bad {
			return
		}
		if s.peek() == ',' {
			s.i++
			continue
		}
		s.eat('}')
		return
	}
}

var (
	recordFields = []string{"threadID", "transactionID", "operationID", "operationTraceType", "startTimestamp", "finishTimestamp",
		"isolationLevel", "exception", "traceLockMode", "readMode", "readTupleList", "writeTupleList"}
	tupleFields = []string{"table", "primaryKey", "valueMap"}
)

// record reads one record object into rec.
func (s *fastScan) record(rec *record) {
	var seen uint16
	once := func(bit uint16) {
		if seen&bit != 0 {
			s.bad = true // a duplicate: encoding/json merges, leave it to it
		}
		seen |= bit
	}
	s.object(recordFields, func(name []byte) bool {
		switch string(name) {
		case "threadID":
			once(1)
			rec.ThreadID = s.scalar()
		case "transactionID":
			once(2)
			rec.TransactionID = s.scalar()
		case "operationID":
			// Not used: validated (as scalar would), not kept.
			once(4)
			if c := s.peek(); c == '{' || c == '[' {
				s.bad = true
			}
			s.skip(0)
		case "operationTraceType":
			once(8)
			rec.OperationTraceType = s.stringField()
		case "startTimestamp":
			once(16)
			rec.StartTimestamp = s.timestamp(&s.ts[0])
		case "finishTimestamp":
			once(32)
			rec.FinishTimestamp = s.timestamp(&s.ts[1])
		case "isolationLevel":
			once(64)
			rec.IsolationLevel = s.stringField()
		case "exception":
			once(128)
			rec.Exception = s.stringField()
		case "traceLockMode":
			once(256)
			rec.TraceLockMode = s.stringField()
		case "readMode":
			once(512)
			rec.ReadMode = s.stringField()
		case "readTupleList":
			once(1024)
			rec.ReadTupleList = s.tuples(0)
		case "writeTupleList":
			once(2048)
			rec.WriteTupleList = s.tuples(1)
		default:
			return false
		}
		return true
	})
}

// tuples reads a tuple list (null: none) into scratch list l.
func (s *fastScan) tuples(l int) []tuple {
	if s.null() {
		return nil
	}
	if !s.eat('[') {
		return nil
	}
	clear(s.tl[l])
	ts := s.tl[l][:0]
	defer func() { s.tl[l] = ts }()
	if s.peek() == ']' {
		s.i++
		return ts
	}
	for !s.bad {
		var tp tuple
		tp.fast = true
		if !s.null() {
			s.tuple(&tp)
		}
		ts = append(ts, tp)
		if s.peek() == ',' {
			s.i++
			continue
		}
		s.eat(']')
		break
	}
	return ts
}

func (s *fastScan) tuple(tp *tuple) {
	var seen uint8
	once := func(bit uint8) {
		if seen&bit != 0 {
			s.bad = true
		}
		seen |= bit
	}
	s.object(tupleFields, func(name []byte) bool {
		switch string(name) {
		case "table":
			once(1)
			tp.Table = s.scalar()
		case "primaryKey":
			once(2)
			tp.PrimaryKey = s.scalar()
		case "valueMap":
			once(4)
			tp.cols = s.valueMap()
		default:
			return false
		}
		return true
	})
}

// valueMap reads the columns (null or {}: none), sorted by name, into the
// record's scratch column list.
func (s *fastScan) valueMap() []colVal {
	if s.null() {
		return nil
	}
	if !s.eat('{') {
		return nil
	}
	start := len(s.cols)
	if s.peek() == '}' {
		s.i++
		return s.cols[start:start:start]
	}
	for !s.bad {
		c := s.str()
		if !s.eat(':') {
			return nil
		}
		s.cols = append(s.cols, colVal{c: c, v: s.value()})
		if s.peek() == ',' {
			s.i++
			continue
		}
		s.eat('}')
		break
	}
	cols := s.cols[start:len(s.cols):len(s.cols)]
	if len(cols) > 1 {
		sort.Slice(cols, func(i, j int) bool { return cols[i].c < cols[j].c })
		for i := 1; i < len(cols); i++ {
			if cols[i].c == cols[i-1].c {
				s.bad = true // a duplicate column: the map keeps the last one
			}
		}
	}
	return cols
}

// fast decodes one file's bytes (BOM removed) with the fast scanner. ok
// false: the file needs the general reader, and the builder must be
// discarded (records before the one that stopped the scanner were added).
// Otherwise err is what the general reader would return.
func (b *builder) fast(data []byte, name string) (ok bool, err error) {
	s := &fastScan{d: data}
	array := s.peek() == '['
	if array {
		s.i++
	}
	off := int64(s.i) // where encoding/json's offset would be
	for n := 0; ; n++ {
		c := s.peek()
		if array {
			if c == ']' {
				s.i++
				break
			}
			if n > 0 {
				if c != ',' {
					return false, nil
				}
				s.i++
				c = s.peek()
			}
		} else if c == 0 {
			break
		}
		if c != '{' {
			return false, nil
		}
		var rec record
		s.cols = s.cols[:0]
		s.record(&rec)
		if s.bad {
			return false, nil
		}
		if err := b.record(&rec); err != nil {
			return true, recordErr(err, data, name, off, n)
		}
		off = int64(s.i)
	}
	if s.peek() != 0 {
		return false, nil // data after the closing ]
	}
	return true, nil
}

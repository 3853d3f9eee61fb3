package isodiff

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

// Trace formats.
const (
	FormatAuto  = "auto"
	FormatPlain = "plain" // SESSION<TAB>SQL[<TAB>PARAMS as a JSON array]
	FormatPG    = "pglog" // PostgreSQL server log with log_statement=all
	FormatMySQL = "mysql" // MariaDB/MySQL general query log
)

// Dialects.
const (
	DialectAuto     = "auto"
	DialectPostgres = "postgres"
	DialectMySQL    = "mysql"
)

// Entry is one statement as a trace shows it.
type Entry struct {
	Session string
	SQL     string
	Params  []string // bound parameter values, nil when none or unknown
	Line    int      // 1-based line of the statement's first line
	// Label names the transaction this statement belongs to (plain
	// format "-- label: NAME" lines); "" when none.
	Label string
	// Txn is the recorder's id of the transaction this statement begins
	// (plain format "-- txn: ID" lines, written by txray run --sql-trace:
	// the id of the transaction in the recorded history); "" when none.
	Txn string
}

// MaybeGunzip returns r decompressed when it starts with the gzip magic
// bytes (a .gz trace, whatever its name), else r itself. A corrupt gzip
// header is an input error naming file.
func MaybeGunzip(r io.Reader, file string) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(2)
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, &history.InputError{File: file, Msg: "gzip: " + err.Error()}
	}
	return z, nil
}

// ReadTrace reads a trace in the given format (FormatAuto detects it from
// the first lines). file names the input in errors.
func ReadTrace(r io.Reader, file, format string) ([]Entry, string, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if format == "" || format == FormatAuto {
		peek, _ := br.Peek(1 << 14)
		format = detect(string(peek))
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	var (
		out []Entry
		err error
	)
	switch format {
	case FormatPlain:
		out, err = readPlain(sc, file)
	case FormatPG:
		out, err = readPGLog(sc, file)
	case FormatMySQL:
		out, err = readMySQLLog(sc, file)
	default:
		return nil, format, fmt.Errorf("unknown trace format %q (want auto, plain, pglog or mysql)", format)
	}
	if err == nil {
		if e := sc.Err(); e != nil {
			err = &history.InputError{File: file, Msg: e.Error()}
		}
	}
	return out, format, err
}

func detect(head string) string {
	for _, l := range strings.Split(head, "\n") {
		switch {
		case strings.Contains(l, "LOG:  statement: "), strings.Contains(l, "LOG:  execute "):
			return FormatPG
		case strings.HasPrefix(l, "Time") && strings.Contains(l, "Id Command") && strings.Contains(l, "Argument"):
			return FormatMySQL
		case strings.Contains(l, " started with:") && strings.Contains(l, "Version:"):
			return FormatMySQL
		}
	}
	return FormatPlain
}

// readPlain reads SESSION<TAB>SQL[<TAB>PARAMS] lines. Blank lines and
// lines starting with '#' are skipped; a statement "-- label: NAME" labels
// the session's current (or next) transaction, and "-- txn: ID" gives the
// session's next transaction its recorder id.
func readPlain(sc *bufio.Scanner, file string) ([]Entry, error) {
	var out []Entry
	labels := map[string]string{}
	txns := map[string]string{}
	ln := 0
	for sc.Scan() {
		ln++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sess, rest, ok := strings.Cut(line, "\t")
		if !ok || sess == "" {
			return nil, &history.InputError{File: file, Line: ln, Field: "session", Msg: "want SESSION<TAB>SQL[<TAB>PARAMS]"}
		}
		sql, ps, hasPs := strings.Cut(rest, "\t")
		if l, ok := strings.CutPrefix(strings.TrimSpace(sql), "-- label:"); ok {
			labels[sess] = strings.TrimSpace(l)
			continue
		}
		if id, ok := strings.CutPrefix(strings.TrimSpace(sql), "-- txn:"); ok {
			txns[sess] = strings.TrimSpace(id)
			continue
		}
		e := Entry{Session: sess, SQL: sql, Line: ln, Label: labels[sess], Txn: txns[sess]}
		delete(txns, sess) // names the next statement's transaction only
		if hasPs && strings.TrimSpace(ps) != "" {
			var raw []any
			if err := json.Unmarshal([]byte(ps), &raw); err != nil {
				return nil, &history.InputError{File: file, Line: ln, Field: "params", Msg: "want a JSON array: " + err.Error()}
			}
			for _, v := range raw {
				switch x := v.(type) {
				case nil:
					e.Params = append(e.Params, "NULL")
				case string:
					e.Params = append(e.Params, normValue("'"+x+"'"))
				default:
					e.Params = append(e.Params, fmt.Sprint(x))
				}
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// readPGLog reads a PostgreSQL server log written with
// log_statement=all. The session of a line is taken from its
// log_line_prefix: the session id (%c, "hex.hex") if present, else the
// process id in brackets (%p as in the default prefix "%m [%p] ").
// Statements come from "statement: " and "execute NAME: " messages; a
// following "DETAIL:  parameters: $1 = '...', ..." supplies bound values.
// Continuation lines (starting with a tab) extend the previous message.
func readPGLog(sc *bufio.Scanner, file string) ([]Entry, error) {
	var out []Entry
	ln := 0
	last := -1 // index in out of the last statement, for continuations and DETAIL
	lastMsg := ""
	for sc.Scan() {
		ln++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "\t") {
			if lastMsg == "stmt" && last >= 0 {
				out[last].SQL += "\n" + line[1:]
			}
			continue
		}
		prefix, msg, kind := splitPGLine(line)
		switch kind {
		case "LOG":
			var sql string
			if s, ok := strings.CutPrefix(msg, "statement: "); ok {
				sql = s
			} else if s, ok := strings.CutPrefix(msg, "execute "); ok {
				if _, q, ok := strings.Cut(s, ": "); ok {
					sql = q
				} else {
					lastMsg = ""
					continue
				}
			} else {
				lastMsg = ""
				continue
			}
			sess := pgSession(prefix)
			if sess == "" {
				return nil, &history.InputError{File: file, Line: ln, Field: "log_line_prefix",
					Msg: "no session in the line prefix: set log_line_prefix to include %c (session id) or [%p] (process id)"}
			}
			out = append(out, Entry{Session: sess, SQL: sql, Line: ln})
			last, lastMsg = len(out)-1, "stmt"
		case "DETAIL":
			if p, ok := strings.CutPrefix(msg, "parameters: "); ok && lastMsg == "stmt" && last >= 0 && pgSession(prefix) == out[last].Session {
				ps, err := parsePGParams(p)
				if err != nil {
					return nil, &history.InputError{File: file, Line: ln, Field: "parameters", Msg: err.Error()}
				}
				out[last].Params = ps
			}
			lastMsg = ""
		default:
			lastMsg = ""
		}
	}
	return out, nil
}

// splitPGLine splits "PREFIX LEVEL:  message" at the severity word.
func splitPGLine(line string) (prefix, msg, kind string) {
	for _, k := range []string{"LOG", "DETAIL", "ERROR", "STATEMENT", "HINT", "CONTEXT", "WARNING", "FATAL", "PANIC", "NOTICE", "INFO", "DEBUG1", "DEBUG2", "DEBUG3", "DEBUG4", "DEBUG5"} {
		if i := strings.Index(line, k+":  "); i >= 0 && (i == 0 || line[i-1] == ' ') {
			return line[:i], line[i+len(k)+3:], k
		}
	}
	return "", "", ""
}

func pgSession(prefix string) string {
	pid := ""
	for _, tok := range strings.Fields(prefix) {
		if strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]") && pid == "" {
			in := tok[1 : len(tok)-1]
			in, _, _ = strings.Cut(in, "-")
			if _, err := strconv.Atoi(in); err == nil {
				pid = "pid:" + in
			}
			continue
		}
		if strings.Contains(tok, ":") {
			continue
		}
		if a, b, ok := strings.Cut(tok, "."); ok && isHex(a) && isHex(b) {
			return "session:" + tok
		}
	}
	return pid
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// parsePGParams parses "$1 = '1', $2 = NULL, $3 = 'it”s'".
func parsePGParams(s string) ([]string, error) {
	var out []string
	i := 0
	for i < len(s) {
		if s[i] != '$' {
			return nil, fmt.Errorf("want $N at offset %d", i)
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(s[i+1 : j])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad parameter number at offset %d", i)
		}
		if !strings.HasPrefix(s[j:], " = ") {
			return nil, fmt.Errorf("want ' = ' at offset %d", j)
		}
		j += 3
		var val string
		if strings.HasPrefix(s[j:], "NULL") {
			val, j = "NULL", j+4
		} else if j < len(s) && s[j] == '\'' {
			var b strings.Builder
			k := j + 1
			for {
				if k >= len(s) {
					return nil, fmt.Errorf("unterminated quoted value at offset %d", j)
				}
				if s[k] == '\'' {
					if k+1 < len(s) && s[k+1] == '\'' {
						b.WriteByte('\'')
						k += 2
						continue
					}
					k++
					break
				}
				b.WriteByte(s[k])
				k++
			}
			val, j = normValue("'"+b.String()+"'"), k
		} else {
			return nil, fmt.Errorf("want a quoted value or NULL at offset %d", j)
		}
		for len(out) < n {
			out = append(out, "")
		}
		out[n-1] = val
		if strings.HasPrefix(s[j:], ", ") {
			j += 2
		} else if j != len(s) {
			return nil, fmt.Errorf("want ', ' at offset %d", j)
		}
		i = j
	}
	return out, nil
}

// readMySQLLog reads a MariaDB/MySQL general query log. A record line is
// [TIME<TAB>] ID COMMAND<TAB>ARGUMENT; lines that are not records continue
// the previous record's argument (multi-line statements). Query and
// Execute records are statements (Execute carries the statement with its
// parameters substituted); the connection id is the session.
func readMySQLLog(sc *bufio.Scanner, file string) ([]Entry, error) {
	var out []Entry
	ln := 0
	last := -1
	for sc.Scan() {
		ln++
		line := strings.TrimRight(sc.Text(), "\r")
		id, cmd, arg, ok := splitMySQLLine(line)
		if !ok {
			if last >= 0 && !isMySQLHeader(line) {
				out[last].SQL += "\n" + line
			}
			continue
		}
		last = -1
		switch cmd {
		case "Query", "Execute":
			out = append(out, Entry{Session: "conn:" + id, SQL: arg, Line: ln})
			last = len(out) - 1
		case "Quit", "Connect":
			// A connection id may be reused after Quit: keep sessions
			// apart by closing any open transaction (see groupTxns).
			out = append(out, Entry{Session: "conn:" + id, SQL: "", Line: ln})
		}
	}
	return out, nil
}

func isMySQLHeader(l string) bool {
	return strings.HasPrefix(l, "Time") && strings.Contains(l, "Command") ||
		strings.Contains(l, " started with:") || strings.HasPrefix(l, "Tcp port:")
}

func splitMySQLLine(line string) (id, cmd, arg string, ok bool) {
	rest := line
	// Leading timestamp: MySQL 8 "2024-01-02T03:04:05.123456Z", MariaDB
	// "240102  3:04:05"; both end before a tab.
	if f, r, found := strings.Cut(rest, "\t"); found && strings.Contains(f, ":") {
		rest = r
	}
	rest = strings.TrimLeft(rest, " \t")
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j >= len(rest) || rest[j] != ' ' {
		return "", "", "", false
	}
	id = rest[:j]
	rest = strings.TrimLeft(rest[j:], " ")
	cmd, arg, found := strings.Cut(rest, "\t")
	if !found {
		cmd, arg = rest, ""
	}
	cmd = strings.TrimSpace(cmd)
	switch cmd {
	case "Query", "Execute", "Prepare", "Close stmt", "Connect", "Quit", "Init DB", "Field List", "Statistics", "Ping", "Reset stmt", "Change user", "Set option", "Long Data", "Fetch", "Refresh", "Shutdown", "Processlist", "Kill", "Debug", "Binlog Dump", "Table Dump", "Register Slave", "Daemon", "Error", "Reset connection":
		return id, cmd, arg, true
	}
	return "", "", "", false
}

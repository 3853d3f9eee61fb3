package isodiff

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/txray/txray/history"
)

// Hints is developer knowledge IsoDiff cannot see in a trace (§4.4 of the
// paper: hints remove false positives the static analysis cannot rule
// out). The file format is one directive a line, '#' starts a comment:
//
//	remove-class CLASS                 # never runs concurrently with others (e.g. a batch job)
//	replicas CLASS N                   # at most N instances run at once (e.g. one delivery worker)
//	remove-edge CLASS1 CLASS2 [T.COL]  # their conflicts (on T.COL) never happen
//	exclusive EDGE1 EDGE2              # no anomaly uses both edges
//	correlated EDGE1 EDGE2             # an anomaly uses both edges or neither
//	irreparable T.COL                  # do not propose T.COL as a TargetColumn
//	commutative T.COL                  # updates of T.COL commute (x = x + d): no conflict between its updaters
//	unique T.COL                       # T.COL is a unique ID: rows created with it are per instance
//	ignore T.COL                       # not application data (instrumentation): drop its accesses
//	label NAME r:T.COL|w:T.COL...      # name the classes that read/write all these columns
//
// CLASS is a class label or ID; EDGE is CLASS1->CLASS2 or
// CLASS1->CLASS2:T.COL; T may be * in ignore/commutative/irreparable.
type Hints struct {
	RemoveClass map[string]bool
	Replicas    map[string]int
	RemoveEdges []EdgeHint
	Exclusive   [][2]EdgeHint
	Correlated  [][2]EdgeHint
	Irreparable []string
	Commutative []string
	Unique      []string
	Ignore      []string
	Labels      []LabelRule
}

// LabelRule names the classes that make all of Need's accesses.
type LabelRule struct {
	Name string
	Need []struct {
		Column string
		Write  bool
	}
}

// EdgeHint names the conflicts from one class to another, optionally on
// one column.
type EdgeHint struct {
	From, To string
	Column   string // table.column or ""
}

// ParseHints reads a hints file.
func ParseHints(r io.Reader, file string) (*Hints, error) {
	h := &Hints{RemoveClass: map[string]bool{}, Replicas: map[string]int{}}
	sc := bufio.NewScanner(r)
	ln := 0
	for sc.Scan() {
		ln++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(msg string) error {
			return &history.InputError{File: file, Line: ln, Field: f[0], Msg: msg}
		}
		args := f[1:]
		switch f[0] {
		case "remove-class":
			if len(args) != 1 {
				return nil, bad("want: remove-class CLASS")
			}
			h.RemoveClass[args[0]] = true
		case "replicas":
			if len(args) != 2 {
				return nil, bad("want: replicas CLASS N")
			}
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				return nil, bad("N must be a positive integer")
			}
			h.Replicas[args[0]] = n
		case "remove-edge":
			if len(args) < 2 || len(args) > 3 {
				return nil, bad("want: remove-edge CLASS1 CLASS2 [TABLE.COLUMN]")
			}
			e := EdgeHint{From: args[0], To: args[1]}
			if len(args) == 3 {
				if !isColumn(args[2]) {
					return nil, bad("want TABLE.COLUMN, got " + args[2])
				}
				e.Column = args[2]
			}
			h.RemoveEdges = append(h.RemoveEdges, e)
		case "exclusive", "correlated":
			if len(args) != 2 {
				return nil, bad("want: " + f[0] + " CLASS1->CLASS2[:TABLE.COLUMN] CLASS3->CLASS4[:TABLE.COLUMN]")
			}
			var p [2]EdgeHint
			for i, a := range args {
				e, ok := parseEdge(a)
				if !ok {
					return nil, bad("want CLASS1->CLASS2 or CLASS1->CLASS2:TABLE.COLUMN, got " + a)
				}
				p[i] = e
			}
			if f[0] == "exclusive" {
				h.Exclusive = append(h.Exclusive, p)
			} else {
				h.Correlated = append(h.Correlated, p)
			}
		case "irreparable", "commutative", "unique", "ignore":
			if len(args) != 1 || !isColumn(args[0]) {
				return nil, bad("want: " + f[0] + " TABLE.COLUMN")
			}
			c := strings.ToLower(args[0])
			switch f[0] {
			case "irreparable":
				h.Irreparable = append(h.Irreparable, c)
			case "commutative":
				h.Commutative = append(h.Commutative, c)
			case "unique":
				h.Unique = append(h.Unique, c)
			case "ignore":
				h.Ignore = append(h.Ignore, c)
			}
		case "label":
			if len(args) < 2 {
				return nil, bad("want: label NAME r:TABLE.COLUMN|w:TABLE.COLUMN...")
			}
			r := LabelRule{Name: args[0]}
			for _, a := range args[1:] {
				kind, col, ok := strings.Cut(a, ":")
				if !ok || kind != "r" && kind != "w" || !isColumn(col) {
					return nil, bad("want r:TABLE.COLUMN or w:TABLE.COLUMN, got " + a)
				}
				r.Need = append(r.Need, struct {
					Column string
					Write  bool
				}{strings.ToLower(col), kind == "w"})
			}
			h.Labels = append(h.Labels, r)
		default:
			return nil, bad("unknown directive (want remove-class, replicas, remove-edge, exclusive, correlated, irreparable, commutative, unique, ignore or label)")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &history.InputError{File: file, Line: ln, Msg: err.Error()}
	}
	return h, nil
}

func isColumn(s string) bool {
	t, c, ok := strings.Cut(s, ".")
	return ok && t != "" && c != "" && !strings.Contains(c, ".")
}

func parseEdge(s string) (EdgeHint, bool) {
	from, rest, ok := strings.Cut(s, "->")
	if !ok || from == "" {
		return EdgeHint{}, false
	}
	to, col, hasCol := strings.Cut(rest, ":")
	if to == "" || hasCol && !isColumn(col) {
		return EdgeHint{}, false
	}
	return EdgeHint{From: from, To: to, Column: strings.ToLower(col)}, true
}

// colMatch: pattern is table.column with table possibly "*".
func colMatch(pattern, table, column string) bool {
	t, c, _ := strings.Cut(pattern, ".")
	return (t == "*" || t == table) && (c == column)
}

func anyColMatch(patterns []string, table, column string) bool {
	for _, p := range patterns {
		if colMatch(p, table, column) {
			return true
		}
	}
	return false
}

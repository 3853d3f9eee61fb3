// Package sqlpred parses and evaluates the subset of SQL WHERE clauses that
// txray's workloads and decoders record for predicate reads (history.PredRead):
// the "matches oracle" of Emme (Bringing Order to Practical Validation of
// Database Isolation Levels, §3: a version matches a predicate when the
// predicate evaluates to TRUE on it) and the source of Leopard's predicate
// regions.
//
// Supported: integer, float, string, boolean and NULL literals; column
// references (case-insensitive identifiers or "quoted"); comparisons
// = <> != < <= > >=; AND, OR, NOT; BETWEEN and NOT BETWEEN; IN and NOT IN
// over a list of expressions; IS [NOT] NULL; [NOT] LIKE with % and _ and an
// optional ESCAPE character (default backslash, as PostgreSQL); arithmetic
// + - * / % and unary minus over integers and floats, and || string
// concatenation; parentheses.
//
// Semantics follow SQL's three-valued logic (ISO/IEC 9075-2 §8, Kleene
// logic): a comparison with a NULL operand is UNKNOWN; NOT UNKNOWN is
// UNKNOWN; FALSE AND UNKNOWN is FALSE; TRUE OR UNKNOWN is TRUE. A row
// matches a WHERE clause only when it evaluates to TRUE. Integer
// arithmetic is 64-bit and reports overflow and division by zero as errors
// (as PostgreSQL's bigint does); integer division truncates toward zero;
// an integer and a float compare and combine as floats. Strings compare
// byte-wise (the C collation). Comparing a string with a number is a type
// error (PostgreSQL rejects it too).
//
// Evaluation never panics; Compile bounds nesting depth and text length.
package sqlpred

import (
	"strconv"
)

// Type is a value's SQL type.
type Type uint8

const (
	// Null is SQL NULL (of any type).
	Null Type = iota
	// Int is a 64-bit integer.
	Int
	// Float is a double.
	Float
	// Str is a character string.
	Str
	// Bool is a boolean (TRUE or FALSE; UNKNOWN is Null).
	Bool
)

// Value is one SQL value. The zero Value is NULL.
type Value struct {
	T Type
	I int64 // Int; Bool (0 or 1)
	F float64
	S string
}

// IntV returns an integer value.
func IntV(i int64) Value { return Value{T: Int, I: i} }

// FloatV returns a float value.
func FloatV(f float64) Value { return Value{T: Float, F: f} }

// StrV returns a string value.
func StrV(s string) Value { return Value{T: Str, S: s} }

// BoolV returns a boolean value.
func BoolV(b bool) Value {
	if b {
		return Value{T: Bool, I: 1}
	}
	return Value{T: Bool}
}

// NullV is SQL NULL.
var NullV = Value{}

func (v Value) String() string {
	switch v.T {
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Float:
		return strconv.FormatFloat(v.F, 'g', -1, 64)
	case Str:
		return "'" + v.S + "'"
	case Bool:
		if v.I != 0 {
			return "TRUE"
		}
		return "FALSE"
	}
	return "NULL"
}

// Truth is a three-valued truth value.
type Truth uint8

const (
	// False is SQL FALSE.
	False Truth = iota
	// True is SQL TRUE.
	True
	// Unknown is SQL UNKNOWN (a boolean NULL).
	Unknown
)

func (t Truth) String() string {
	switch t {
	case True:
		return "TRUE"
	case False:
		return "FALSE"
	}
	return "UNKNOWN"
}

func truthOf(v Value) Truth {
	switch {
	case v.T == Null:
		return Unknown
	case v.I != 0:
		return True
	}
	return False
}

func truthV(t Truth) Value {
	switch t {
	case True:
		return BoolV(true)
	case False:
		return BoolV(false)
	}
	return NullV
}

func not3(t Truth) Truth {
	switch t {
	case True:
		return False
	case False:
		return True
	}
	return Unknown
}

func and3(a, b Truth) Truth {
	if a == False || b == False {
		return False
	}
	if a == True && b == True {
		return True
	}
	return Unknown
}

func or3(a, b Truth) Truth {
	if a == True || b == True {
		return True
	}
	if a == False && b == False {
		return False
	}
	return Unknown
}

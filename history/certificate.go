package history

// White-box certificates (Bringing Order to Practical Validation of Database
// Isolation Levels, §3–§4; "the seed paper" below).
//
// A version certificate is what a database knows and a client does not:
//   - the version order of every key (History.VersionOrder: the committed
//     versions of each key, oldest first, as value ids);
//   - for every predicate read, its version set (Predicate.VersionSet with
//     HasVersionSet): the version of each row of the table that the
//     statement evaluated its WHERE clause on, one Row per key, whether or
//     not it matched. A Row whose Value is NoValue is the row's initial
//     "unborn" (not yet inserted) version, and a Row whose Value is a
//     Delete op's tombstone is that deleted version; neither matches any
//     predicate. Rows of the table absent from the version set were read
//     at their unborn version (a writer that knows of deletes names the
//     deleted version instead), except that on a table the history does
//     not declare a version set may leave out the rows outside the read's
//     key region (sqlpred: the integer keys its WHERE clause can match
//     whatever the value): they match at no version, so the version
//     evaluated there decides no dependency.
//
// An expected serialization order is the order a concurrency-control
// protocol promises transactions serialize in: commit order for two-phase
// locking and other commitment-ordering protocols, start (timestamp) order
// for timestamp ordering. Evidence.SerialOrder names which of the
// transaction timestamps carries it (SerialCommit: CommitTS; SerialStart:
// StartTS). A transaction without that timestamp (e.g. a read-only
// transaction whose commit left no trace in the log) has no fixed place in
// the order; checkers place it where its reads allow, or say they cannot.

// Values of Evidence.SerialOrder.
const (
	// SerialCommit: the expected serialization order is CommitTS order
	// (two-phase locking, commitment ordering).
	SerialCommit = "commit"
	// SerialStart: the expected serialization order is StartTS order
	// (timestamp ordering).
	SerialStart = "start"
)

// SerialTS returns the timestamp that places t in the expected
// serialization order named by Evidence.SerialOrder, if any.
func (h *History) SerialTS(t *Txn) (Timestamp, bool) {
	switch h.Evidence.SerialOrder {
	case SerialCommit:
		return t.CommitTS, t.CommitTS.Set
	case SerialStart:
		return t.StartTS, t.StartTS.Set
	}
	return Timestamp{}, false
}

// PredColumns are the columns of the rows of a table the history does not
// declare (recorder tables and predicate-read rows are (k, v): the row key
// and its value); WHERE clauses of PredRead ops on such tables are
// evaluated over them. Declared tables have their own columns (schema.go).
var PredColumns = []string{"k", "v"}

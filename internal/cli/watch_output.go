package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/txray/txray/check"
	"github.com/txray/txray/report"
)

// printWatchFinal prints `txray watch`'s final verdict in the shapes of
// `txray check`: with asJSON one object of docs/json-output.md ("history"
// is null: a stream is checked as it passes and not kept; "error" holds an
// input error, the verdict then covering what was received), else the text
// report, summary first. A "valid" verdict over no checked transaction is
// not a claim the checker can make: it becomes unknown with that reason.
func printWatchFinal(cmd *cobra.Command, source string, res *check.Result, inputErr error, asJSON bool) error {
	honestEmpty(res)
	in := &report.Input{File: source, Results: []*check.Result{res}}
	if inputErr != nil {
		in.Error = inputErr.Error()
	}
	if asJSON {
		return report.WriteJSON(cmd.OutOrStdout(), in)
	}
	return report.WriteTextOptions(cmd.OutOrStdout(), in, report.TextOptions{})
}

// honestEmpty turns a valid verdict over zero checked transactions into
// unknown.
func honestEmpty(r *check.Result) {
	if r == nil || r.Verdict != check.Valid {
		return
	}
	n, ok := r.Stats["txns"]
	if !ok {
		return
	}
	var zero bool
	switch v := n.(type) {
	case int:
		zero = v == 0
	case int64:
		zero = v == 0
	case float64:
		zero = v == 0
	}
	if zero {
		r.Verdict = check.Unknown
		if r.Reason != "" {
			r.Reason += "; "
		}
		r.Reason += "no transaction was checked (none received, or none carried the evidence this checker needs: see docs/watch.md)"
	}
}

// watchSource names the watched input for reports: "-" (stdin), the
// followed file, or "http://ADDR".
func watchSource(follow, httpAddr string) string {
	switch {
	case follow != "":
		return follow
	case httpAddr != "":
		return "http://" + httpAddr
	}
	return "-"
}

// inputErr is err unless it only reports the end of watching (SIGINT,
// SIGTERM).
func inputErr(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

package cli

import (
	"io"

	"github.com/txray/txray/check"
	"github.com/txray/txray/report"
)

// writeWatchReport prints `txray watch`'s final verdict in the shapes of
// `txray check`: with asJSON one object of docs/json-output.md ("history"
// is null: a stream is checked as it passes and not kept; "error" says what
// input was rejected or ended the stream, the verdict then covering what
// was accepted), else the text report, summary first.
func writeWatchReport(out io.Writer, source string, res *check.Result, inputError string, asJSON bool) error {
	if source == "" {
		source = "-"
	}
	in := &report.Input{File: source, Results: []*check.Result{res}, Error: inputError}
	if asJSON {
		return report.WriteJSON(out, in)
	}
	return report.WriteTextOptions(out, in, report.TextOptions{})
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

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Columns of the text table, in order (WriteTable).
var Columns = []string{"txns", "format", "file MB", "gen s", "decode s", "MB/s", "checker", "check s",
	"check/decode", "total s", "txns/s", "peak RSS MiB", "verdict"}

// WriteTable writes rows as an aligned text table: file sizes and
// throughput in decimal megabytes (10^6 bytes), memory in MiB (2^20 bytes).
// "gen s" is blank for --file inputs and marked "(kept)" when a kept file
// was reused (the time is then the one recorded when it was generated).
// "peak RSS" is the check child's (decode + check). Reasons for verdicts
// other than valid are clipped to 100 characters.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The verdict is trailing text, left-aligned.
	fmt.Fprintln(tw, strings.Join(Columns[:len(Columns)-1], "\t")+"\t  "+Columns[len(Columns)-1])
	for _, r := range rows {
		gen := ""
		if r.GenSeconds > 0 {
			gen = secs(r.GenSeconds)
			if r.GenReused {
				gen += " (kept)"
			}
		}
		verdict := r.Verdict
		if len(r.AnomalyTypes) > 0 {
			verdict += " " + strings.Join(r.AnomalyTypes, ",")
		}
		if r.Reason != "" && r.Verdict != "valid" {
			verdict += " (" + clip(r.Reason, 100) + ")"
		}
		checker := r.Checker
		if checker == "" {
			checker = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\n",
			r.Txns, r.Format, float64(r.FileBytes)/1e6, gen, secs(r.DecodeSeconds), r.DecodeMBps,
			checker, secs(r.CheckSeconds), ratio(r.CheckDecodeRatio), secs(r.TotalSeconds),
			count(r.TxnsPerSec), mib(r.PeakRSS), verdict)
	}
	return tw.Flush()
}

// WriteJSON writes rows as JSON Lines, one Row object per line.
func WriteJSON(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func secs(s float64) string {
	switch {
	case s == 0:
		return "-"
	case s < 10:
		return fmt.Sprintf("%.3f", s)
	}
	return fmt.Sprintf("%.1f", s)
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", x)
}

func count(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", x)
}

func mib(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(b)/(1<<20))
}

// clip shortens s to at most n runes (the JSON rows keep the whole text).
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

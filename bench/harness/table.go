package harness

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// WriteTable prints the results as a Markdown table with a legend.
func WriteTable(w io.Writer, rs []Result) error {
	rows := [][]string{{"figure", "tsd", "peer", "ratio", "runs"}}
	for i := range rs {
		rows = append(rows, tableRow(&rs[i]))
	}
	widths := make([]int, 5)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for i, r := range rows {
		writeRow(&b, r, widths)
		if i == 0 {
			sep := make([]string, len(r))
			for j := range sep {
				sep[j] = strings.Repeat("-", widths[j])
			}
			writeRow(&b, sep, widths)
		}
	}
	b.WriteString("\nratio = tsd / peer (medians); ↑ higher is better, ↓ lower is better.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeRow(b *strings.Builder, r []string, widths []int) {
	b.WriteString("|")
	for i, c := range r {
		fmt.Fprintf(b, " %-*s |", widths[i], c)
	}
	b.WriteString("\n")
}

func tableRow(r *Result) []string {
	f := r.Figure
	arrow := "↑"
	if f.LowerIsBetter {
		arrow = "↓"
	}
	tsd, peer := cell(f.TSD, r.TSD, r.TSDErr, f.Unit), cell(f.Peer, r.Peer, r.PeerErr, f.Unit)
	ratio := "-"
	if len(r.TSD) > 0 && len(r.Peer) > 0 && Median(r.Peer) != 0 {
		ratio = fmt.Sprintf("%.2fx", Median(r.TSD)/Median(r.Peer))
	}
	runs := fmt.Sprintf("%d", max(len(r.TSD), len(r.Peer)))
	return []string{f.Name + " " + arrow, tsd, peer, ratio, runs}
}

func cell(s Side, vs []float64, err error, unit string) string {
	switch {
	case s.Measure == nil:
		return s.Missing
	case err != nil && len(vs) == 0:
		return "error (see log)"
	}
	c := fmt.Sprintf("%s %s (%s)", formatValue(Median(vs)), unit, s.Name)
	if err != nil {
		c += " [some runs failed]"
	}
	return c
}

// formatValue prints three significant digits with a k/M/G suffix.
func formatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trim(v/1e9) + "G"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e4:
		return trim(v/1e3) + "k"
	}
	return trim(v)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.Contains(s, "e") {
		return fmt.Sprintf("%.0f", v)
	}
	return s
}

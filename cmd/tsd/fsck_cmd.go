package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/tsd-db/tsd/query/fsck"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// fsckUsage documents tsd fsck.
const fsckUsage = `Usage: tsd fsck [--config FILE] [--KEY=VALUE]... [--data DIR] [--fix] [--resolve-duplicates] [START END] [METRIC...]

Checks the data table and the series index of a stopped store, as
OpenTSDB's tsdb fsck checks its data table, with tsd's own checks:
  bad_key             a row key that does not parse
  bad_salt            salt bytes that are not the series' bucket
  unknown_uid         a UID that was never assigned (above the max id)
  orphan_row          a UID that was deleted (tsd uid delete)
  bad_qualifier       a data column whose qualifier does not parse or is unknown
  bad_value_length    a single cell whose value length disagrees with its flags
  bad_compacted       a compacted or appends column whose lengths disagree
  duplicate           a timestamp held more than once in a row's columns
  bad_dense           a tsd dense column that does not decode
  missing_index       a row whose series the index misses (or whose hour its span misses)
  index_without_rows  an index entry with no row (checked without START END)
START END limit the check to the rows of their hours, METRIC to those
metrics. Times are tsd scan's. The daemon must be stopped first (the store
is locked while it runs), and should have stopped cleanly: points still in
its write-ahead log are not in the table yet.

--fix repairs what can be repaired: rows with bad keys or nameless UIDs and
columns nothing can read are deleted; values of the wrong length get
OpenTSDB's fix; rows under a wrong salt move to their key; missing index
entries are registered. --resolve-duplicates (with --fix) rewrites a row
holding duplicates as one column of what tsd reads: the last write of each
timestamp. Unknown columns and index entries without rows are never
changed; the report says so.

Output: a progress bar on stderr; on stdout
  checked R rows, C cells, P points
  KIND: N found[, F fixed][, U not fixed]      one line per kind found
    row ROWKEYHEX [q=QUALIFIERHEX]: DETAIL [(fixed) | (not fixed: WHY)]
  ... up to 5 examples per kind, then the total:
  no damage found | N problems found, F fixed, U not fixed
Exit status: 0 nothing found or everything found fixed, 1 damage left (or
the check failed), 2 usage.

Flags:
  --fix                   repair what can be repaired
  --resolve-duplicates    with --fix: rewrite rows holding duplicate timestamps
  --help, -h              print this help
`

// fsckCmd is the parsed tsd fsck command line.
type fsckCmd struct {
	start, end int64
	metrics    []string
	fix, dups  bool
	help       bool
}

// runFsck is tsd fsck.
func runFsck(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	fc, cl, err := parseFsckArgs(args, c.isBoolFlag, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "tsd fsck: %v\nRun 'tsd fsck --help' for usage.\n", err)
		return exitUsage
	}
	if fc.help {
		fmt.Fprint(stdout, fsckUsage)
		return exitOK
	}
	return runTool("tsd fsck", "tsd fsck", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return fc.run(ctx, c, log, stdout, stderr)
	})
}

// parseFsckArgs reads the flags, the optional START END and the metrics.
func parseFsckArgs(args []string, isBool func(string) bool, now time.Time) (fsckCmd, cmdline, error) {
	var fc fsckCmd
	rest, _, set, err := takeFlags(args, nil, []string{"fix", "resolve-duplicates"})
	if err != nil {
		return fc, cmdline{}, err
	}
	fc.fix, fc.dups = set["fix"], set["resolve-duplicates"]
	if fc.dups && !fc.fix {
		return fc, cmdline{}, errors.New("--resolve-duplicates needs --fix")
	}
	var cl cmdline
	var pos []string
	if pos, fc.help, cl, err = parseToolArgs(rest, "fsck", isBool, func(string) (bool, error) { return false, nil }); err != nil || fc.help {
		return fc, cl, err
	}
	if len(pos) > 0 {
		if s, err := parseScanTime(pos[0], now); err == nil {
			if len(pos) < 2 {
				return fc, cl, errors.New("START needs END")
			}
			e, err := parseScanTime(pos[1], now)
			if err != nil {
				return fc, cl, fmt.Errorf("end time: %w", err)
			}
			if e < s {
				return fc, cl, fmt.Errorf("end time %d is before start time %d", e, s)
			}
			fc.start, fc.end, pos = max(s, 1), e, pos[2:] // 0 0 means every hour
		}
	}
	fc.metrics = pos
	return fc, cl, nil
}

// run opens the stopped store and checks it.
func (fc *fsckCmd) run(ctx context.Context, c *config, log *slog.Logger, stdout, stderr io.Writer) (int, error) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return exitFailed, err
	}
	defer db.Close()
	u, s, err := openUIDTable(ctx, c, db, false, log)
	if err != nil {
		return exitFailed, err
	}
	c.settings = s
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return exitFailed, fmt.Errorf("open the meta table (is %s a tsd store?): %w", c.dataDir, err)
	}
	ix, err := index.Open(ctx, meta, u, &index.Options{Widths: s.Widths})
	if err != nil {
		return exitFailed, fmt.Errorf("open the series index: %w", err)
	}
	defer ix.Close()
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return exitFailed, err
	}
	layout, err := c.layout()
	if err != nil {
		return exitFailed, err
	}
	var metrics [][]byte
	for _, name := range fc.metrics {
		id, err := u.Lookup(ctx, uid.Metric, []byte(name))
		if err != nil {
			return exitFailed, fmt.Errorf("metric %q: %w", name, err)
		}
		metrics = append(metrics, u.AppendID(nil, uid.Metric, id))
	}
	bar := newProgress(stderr, progressOptions{desc: "fsck", total: -1, unit: "rows"})
	rep, err := fsck.Check(ctx, &fsck.Options{Data: data, Layout: layout, Format: s.Format, UIDs: u, Index: ix,
		Metrics: metrics, Start: fc.start, End: fc.end, Fix: fc.fix, ResolveDuplicates: fc.dups, Logger: log,
		Progress: func(rows int64) { bar.set(rows, 0) }})
	bar.finish()
	if rep != nil {
		writeFsckReport(stdout, rep, fc.fix)
	}
	if err != nil {
		return exitFailed, err
	}
	if left := rep.Total() - sumFixed(rep); left > 0 {
		return exitFailed, nil
	}
	return exitOK, nil
}

func sumFixed(r *fsck.Report) (n int64) {
	for _, f := range r.Fixed {
		n += f
	}
	return n
}

// writeFsckReport prints the report by kind with its examples.
func writeFsckReport(w io.Writer, r *fsck.Report, fix bool) {
	fmt.Fprintf(w, "checked %d rows, %d cells, %d points\n", r.Rows, r.Cells, r.Points)
	for k := fsck.Kind(0); k < fsck.NumKinds; k++ {
		if r.Found[k] == 0 {
			continue
		}
		line := fmt.Sprintf("%s: %d found", k, r.Found[k])
		if fix {
			line += fmt.Sprintf(", %d fixed, %d not fixed", r.Fixed[k], r.Found[k]-r.Fixed[k])
		}
		fmt.Fprintln(w, line)
		for _, f := range r.Examples[k] {
			fmt.Fprintf(w, "  %s\n", f.String())
		}
	}
	switch total := r.Total(); {
	case total == 0:
		fmt.Fprintln(w, "no damage found")
	case fix:
		fixed := sumFixed(r)
		fmt.Fprintf(w, "%d problems found, %d fixed, %d not fixed\n", total, fixed, total-fixed)
	default:
		fmt.Fprintf(w, "%d problems found; run with --fix to repair (and --resolve-duplicates for duplicates)\n", total)
	}
}

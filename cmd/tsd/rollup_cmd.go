package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// rollupUsage documents `tsd rollup`.
const rollupUsage = `Usage: tsd rollup [--config FILE] [--KEY=VALUE]... rebuild [--data DIR | --url URL] START [END] [METRIC...]

Builds the rollup cells of raw data already stored: a store written before
rollups or with tsd.rollups.enable=false, an adopted OpenTSDB table, or an
interval added to tsd.rollups.config later. Every raw row of the METRICs
(default: every metric) whose hour overlaps [START, END] is read and its
cells are written whole with the flusher's own code, and each longer
interval's cell (a day) is folded from the stored cells of its span. A cell
is a function of the raw points, so a rebuild can run again, and beside a
running writer (--url), without changing a right cell.

The job goes salt bucket by salt bucket, metric by metric, hour by hour, and
records the last finished step in the meta table: run the same command
again after an interruption (Ctrl-C, a crash) and it continues from there.
The checkpoint is removed when the job ends.

--data DIR (tsd.storage.directory) works on the store offline: on the
embedded engine the daemon must be stopped first. --url URL asks the daemon
at URL (e.g. http://localhost:4242) to run it: POST /api/rollup/rebuild,
answered when the job ends.

Times are tsd scan's: now, <N><unit>-ago, epoch seconds or ms, or
yyyy/MM/dd[-HH:mm[:ss]] in local time. END defaults to now. A metric named
like a time needs END given.

Output: a progress bar on stderr, then one line "rebuilt rollups: S steps
(K skipped by the checkpoint), R raw rows, W rollup rows written, C cells".

Flags:
  --url URL                   ask the daemon at URL
  --help, -h                  print this help
`

// rollupCmd is the parsed `tsd rollup` command line.
type rollupCmd struct {
	args []string
	url  string
	help bool
}

// rebuildRequest is what a rebuild is asked for, on the command line or
// in the body of POST /api/rollup/rebuild.
type rebuildRequest struct {
	Start   int64    `json:"start"` // Unix seconds
	End     int64    `json:"end"`
	Metrics []string `json:"metrics,omitempty"`
}

// runRollup is `tsd rollup ...`.
func runRollup(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	rc, cl, err := parseRollupArgs(args, c.isBoolFlag)
	if err != nil {
		fmt.Fprintf(stderr, "tsd rollup: %v\nRun 'tsd rollup --help' for usage.\n", err)
		return exitUsage
	}
	if rc.help || len(rc.args) == 0 {
		fmt.Fprint(stdout, rollupUsage)
		if rc.help {
			return exitOK
		}
		return exitUsage
	}
	if rc.args[0] != "rebuild" {
		fmt.Fprintf(stderr, "tsd rollup: unknown command %q (want rebuild)\nRun 'tsd rollup --help' for usage.\n", rc.args[0])
		return exitUsage
	}
	req, err := parseRebuildRequest(rc.args[1:], time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "tsd rollup rebuild: %v\nRun 'tsd rollup --help' for usage.\n", err)
		return exitUsage
	}
	if rc.url != "" {
		ctx := context.Background()
		return rebuildRemote(ctx, rc.url, req, stdout, stderr)
	}
	return runTool("tsd rollup", "tsd rollup rebuild", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return rebuildLocal(ctx, c, req, log, stdout, stderr)
	})
}

// parseRollupArgs takes --url out, then separates the subcommand, --help
// and configuration flags (--data is tsd.storage.directory's alias).
func parseRollupArgs(args []string, isBool func(string) bool) (rollupCmd, cmdline, error) {
	var rc rollupCmd
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		name, value, has := cutFlag(args[i])
		if name != "url" {
			rest = append(rest, args[i])
			continue
		}
		if !has {
			if i+1 >= len(args) {
				return rc, cmdline{}, errors.New("flag --url needs a value")
			}
			i++
			value = args[i]
		}
		if !strings.HasPrefix(value, "http://") && !strings.HasPrefix(value, "https://") {
			return rc, cmdline{}, fmt.Errorf("--url %q: want http://HOST:PORT", value)
		}
		rc.url = strings.TrimRight(value, "/")
	}
	var err error
	var cl cmdline
	rc.args, rc.help, cl, err = parseToolArgs(rest, "rollup", isBool, func(string) (bool, error) { return false, nil })
	if err == nil && rc.url != "" {
		for _, f := range cl.flags {
			if f.name == "data" || f.name == "tsd.storage.directory" {
				return rc, cl, errors.New("--data and --url: give one (--url runs the rebuild in that daemon's store)")
			}
		}
	}
	return rc, cl, err
}

// parseRebuildRequest reads START [END] [METRIC...].
func parseRebuildRequest(a []string, now time.Time) (rebuildRequest, error) {
	var req rebuildRequest
	if len(a) == 0 {
		return req, errors.New("usage: rebuild START [END] [METRIC...]")
	}
	start, err := parseScanTime(a[0], now)
	if err != nil {
		return req, fmt.Errorf("start time: %w", err)
	}
	end, a := now.UnixMilli(), a[1:]
	if len(a) > 0 {
		if e, err := parseScanTime(a[0], now); err == nil {
			end, a = e, a[1:]
		}
	}
	if end < start {
		return req, fmt.Errorf("end time %d is before start time %d", end, start)
	}
	req.Start, req.End, req.Metrics = start/1000, end/1000, a
	return req, nil
}

// rebuildLocal opens the store and runs the rebuild with a progress bar.
func rebuildLocal(ctx context.Context, c *config, req rebuildRequest, log *slog.Logger, stdout, stderr io.Writer) (int, error) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return exitFailed, err
	}
	defer db.Close()
	if err := c.prepareStore(ctx, db, log); err != nil {
		return exitFailed, err
	}
	u, _, err := openUIDTable(ctx, c, db, false, log)
	if err != nil {
		return exitFailed, err
	}
	var bar *progress
	report := func(done, total int64) {
		if bar == nil {
			bar = newProgress(stderr, progressOptions{desc: "rollup rebuild", total: total, unit: "steps"})
		}
		bar.set(done, 0)
	}
	st, err := c.rebuildRollups(ctx, db, u, nil, req, report, log) // offline: no flusher writes beside it
	if bar != nil {
		bar.finish()
	}
	if err != nil {
		return exitFailed, err
	}
	writeRebuildStats(stdout, st)
	return exitOK, nil
}

func writeRebuildStats(out io.Writer, st flush.RebuildStats) {
	fmt.Fprintf(out, "rebuilt rollups: %d steps (%d skipped by the checkpoint), %d raw rows, %d rollup rows written, %d cells\n",
		st.Steps, st.Skipped, st.Rows, st.Rollup.Rows, st.Rollup.Cells)
}

// rebuildRollups runs flush.RebuildRollups on the prepared store c
// (prepareStore ran): the active rollup configuration, the metrics named
// (every metric when none).
func (c *config) rebuildRollups(ctx context.Context, db storage.DB, u *uid.UIDs, f *flush.Flusher, req rebuildRequest, progress func(done, total int64), log *slog.Logger) (flush.RebuildStats, error) {
	if c.rollups.active == nil {
		return flush.RebuildStats{}, errors.New("rollups are off (tsd.rollups.enable=false): nothing to rebuild")
	}
	ro, err := c.flushRollups(ctx, db)
	if err != nil {
		return flush.RebuildStats{}, err
	}
	layout, err := c.layout()
	if err != nil {
		return flush.RebuildStats{}, err
	}
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return flush.RebuildStats{}, fmt.Errorf("open the data table %s: %w", c.dataTable, err)
	}
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return flush.RebuildStats{}, err
	}
	var metrics [][]byte
	for _, name := range req.Metrics {
		id, err := u.Lookup(ctx, uid.Metric, []byte(name))
		if err != nil {
			return flush.RebuildStats{}, fmt.Errorf("metric %q: %w", name, err)
		}
		metrics = append(metrics, u.AppendID(nil, uid.Metric, id))
	}
	if len(req.Metrics) == 0 {
		err := u.ForEach(ctx, uid.Metric, "", func(_ string, id uid.ID) error {
			metrics = append(metrics, u.AppendID(nil, uid.Metric, id))
			return nil
		})
		if err != nil {
			return flush.RebuildStats{}, fmt.Errorf("list metrics: %w", err)
		}
		if len(metrics) == 0 {
			return flush.RebuildStats{}, nil
		}
	}
	return flush.RebuildRollups(ctx, &flush.RebuildOptions{Table: data, Meta: meta, Layout: &layout, Format: c.settings.Format,
		Rollups: ro, Metrics: metrics, Start: req.Start, End: req.End, Progress: progress, Logger: log, Flusher: f})
}

// rebuildRemote posts the request to the daemon at url and prints its
// answer.
func rebuildRemote(ctx context.Context, url string, req rebuildRequest, stdout, stderr io.Writer) int {
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/rollup/rebuild", bytes.NewReader(body))
	if err != nil {
		fmt.Fprintf(stderr, "tsd rollup rebuild: %v\n", err)
		return exitUsage
	}
	hreq.Header.Set("Content-Type", "application/json")
	fmt.Fprintf(stderr, "tsd rollup rebuild: asking %s; the daemon answers when the job ends\n", url)
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		fmt.Fprintf(stderr, "tsd rollup rebuild: %v\n", err)
		return exitFailed
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "tsd rollup rebuild: %s: %s\n", resp.Status, bytes.TrimSpace(b))
		return exitFailed
	}
	var st struct {
		Steps, Skipped, Rows, RollupRows, Cells int64
	}
	if err := json.Unmarshal(b, &st); err != nil {
		fmt.Fprintf(stderr, "tsd rollup rebuild: answer %q: %v\n", b, err)
		return exitFailed
	}
	writeRebuildStats(stdout, flush.RebuildStats{Steps: st.Steps, Skipped: st.Skipped, Rows: st.Rows,
		Rollup: flush.RollupStats{Rows: st.RollupRows, Cells: st.Cells}})
	return exitOK
}

// wireRollupRebuild serves POST /api/rollup/rebuild (tsd rollup rebuild
// --url) when rollups are on: the job runs in the request, on the
// daemon's store, beside its flusher.
func (c *config) wireRollupRebuild(opts *api.Options, st *ingestStack, log *slog.Logger) {
	if c.rollups.active == nil {
		return
	}
	opts.RollupRebuild = func(ctx context.Context, req api.RollupRebuildRequest) (api.RollupRebuildResult, error) {
		log.Info("rollup rebuild asked", "start", req.Start, "end", req.End, "metrics", req.Metrics)
		rs, err := c.rebuildRollups(ctx, st.db, st.uids, st.flusher, rebuildRequest{Start: req.Start, End: req.End, Metrics: req.Metrics}, nil, log)
		if err != nil {
			log.Warn("rollup rebuild failed; a rerun continues from its checkpoint", "err", err)
		} else {
			log.Info("rollup rebuild done", "steps", rs.Steps, "skipped", rs.Skipped, "rows", rs.Rows, "cells", rs.Rollup.Cells)
		}
		return api.RollupRebuildResult{Steps: rs.Steps, Skipped: rs.Skipped, Rows: rs.Rows, RollupRows: rs.Rollup.Rows, Cells: rs.Rollup.Cells}, err
	}
}

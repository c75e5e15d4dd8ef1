package main

import (
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
)

// compactUsage documents `tsd compact`.
const compactUsage = `Usage: tsd compact [--config FILE] [--KEY=VALUE]... [--data DIR | --url URL]

Brings a store to the size it settles at. --url URL asks the daemon at URL
(e.g. http://localhost:4242), POST /api/compact (admin): it flushes every
row still in its head to the store, drains its compaction queue and
compacts the store, and answers when that is done. --data DIR
(tsd.storage.directory) works on a stopped daemon's embedded store: it
compacts the store; points in the head's log stay there for the next start.

Output: one line "compacted: F rows (P points) flushed, C queued rows
compacted" (--url), or "compacted DIR" (--data).

Flags:
  --url URL                   ask the daemon at URL
  --help, -h                  print this help
`

// runCompact is `tsd compact ...`.
func runCompact(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	var url string
	pos, help, cl, err := parseToolArgs(args, "compact", c.isBoolFlag, func(string) (bool, error) { return false, nil })
	if err == nil {
		url, cl.flags, err = takeURLFlag(cl.flags)
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsd compact: %v\nRun 'tsd compact --help' for usage.\n", err)
		return exitUsage
	}
	if help {
		fmt.Fprint(stdout, compactUsage)
		return exitOK
	}
	if url != "" {
		return compactRemote(context.Background(), url, stdout, stderr)
	}
	return runTool("tsd compact", "tsd compact", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return compactLocal(ctx, c, log, stdout)
	})
}

// takeURLFlag takes --url out of the configuration flags parseToolArgs
// returned; it refuses --url beside --data.
func takeURLFlag(flags []setting) (string, []setting, error) {
	var url string
	var data bool
	rest := flags[:0:0]
	for _, f := range flags {
		switch f.name {
		case "url":
			if !strings.HasPrefix(f.value, "http://") && !strings.HasPrefix(f.value, "https://") {
				return "", nil, fmt.Errorf("--url %q: want http://HOST:PORT", f.value)
			}
			url = strings.TrimRight(f.value, "/")
			continue
		case "data", "tsd.storage.directory":
			data = true
		}
		rest = append(rest, f)
	}
	if url != "" && data {
		return "", nil, errors.New("--data and --url: give one (--url compacts that daemon's store)")
	}
	return url, rest, nil
}

// compacter is a store that compacts its whole keyspace (the embedded
// engine).
type compacter interface {
	Compact(ctx context.Context) error
}

// compactLocal opens the stopped daemon's store and compacts it.
func compactLocal(ctx context.Context, c *config, log *slog.Logger, out io.Writer) (int, error) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return exitFailed, err
	}
	cp, ok := db.(compacter)
	if !ok {
		db.Close()
		return exitFailed, fmt.Errorf("the %s engine compacts on its own", c.engine)
	}
	if err := cp.Compact(ctx); err != nil {
		db.Close()
		return exitFailed, err
	}
	if err := db.Close(); err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(out, "compacted %s\n", c.dataDir)
	return exitOK, nil
}

// compactRemote posts to the daemon's /api/compact and prints its answer.
func compactRemote(ctx context.Context, url string, stdout, stderr io.Writer) int {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/compact", nil)
	if err != nil {
		fmt.Fprintf(stderr, "tsd compact: %v\n", err)
		return exitUsage
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		fmt.Fprintf(stderr, "tsd compact: %v\n", err)
		return exitFailed
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "tsd compact: %s: %s\n", resp.Status, strings.TrimSpace(string(b)))
		return exitFailed
	}
	var res struct{ FlushedRows, FlushedPoints, CompactedRows int64 }
	if err := json.Unmarshal(b, &res); err != nil {
		fmt.Fprintf(stderr, "tsd compact: answer %q: %v\n", b, err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "compacted: %d rows (%d points) flushed, %d queued rows compacted\n",
		res.FlushedRows, res.FlushedPoints, res.CompactedRows)
	return exitOK
}

// wireCompact serves POST /api/compact (tsd compact --url): the shutdown's
// flush and drain, with the daemon running, then the store's compaction.
func (c *config) wireCompact(opts *api.Options, st *ingestStack, log *slog.Logger) {
	opts.Compact = func(ctx context.Context) (api.CompactResult, error) {
		var res api.CompactResult
		if st.flusher != nil {
			fs, err := st.flusher.Flush(ctx, time.Now(), true)
			res.FlushedRows, res.FlushedPoints = fs.Rows, fs.Points
			if err != nil {
				return res, fmt.Errorf("flush: %w", err)
			}
		}
		if st.compactor != nil {
			cs, err := st.compactor.Drain(ctx)
			res.CompactedRows = cs.Compacted
			if err != nil {
				return res, fmt.Errorf("drain compaction queue: %w", err)
			}
		}
		if cp, ok := st.db.(compacter); ok {
			if err := cp.Compact(ctx); err != nil {
				return res, fmt.Errorf("compact store: %w", err)
			}
		}
		log.Info("compacted", "flushedRows", res.FlushedRows, "flushedPoints", res.FlushedPoints, "compactedRows", res.CompactedRows)
		return res, nil
	}
}

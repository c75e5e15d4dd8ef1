package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index"
	"github.com/tsd-db/tsd/uid/index/lookup"
	"github.com/tsd-db/tsd/uid/tree"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// treeUsage documents `tsd tree`.
const treeUsage = `Usage: tsd tree [--config FILE] [--KEY=VALUE]... sync

Files every series of the series index in every enabled tree (OpenTSDB's
tsdb uid treesync), as the daemon files new series with
tsd.core.tree.enable_processing: branches and leaves already stored are
left as they are, so running it again is harmless; collisions and, for
strict trees, not-matched series are recorded when the tree stores
failures. To rebuild a tree after changing its rules, delete its branches
first (DELETE /api/tree?treeid=N). On the embedded engine the daemon must be
stopped first: the store is locked while it runs.

Commands:
  sync                        file every series in every enabled tree

Flags:
  --help, -h                  print this help

Output: one line "tree sync: T trees, S series filed, E errors". A series
that cannot be read or filed is logged; tsd tree then exits 1.
`

// runTree is `tsd tree ...`.
func runTree(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	pos, help, cl, err := parseToolArgs(args, "tree", c.isBoolFlag, func(string) (bool, error) { return false, nil })
	if err != nil {
		fmt.Fprintf(stderr, "tsd tree: %v\nRun 'tsd tree --help' for usage.\n", err)
		return exitUsage
	}
	if help || len(pos) == 0 {
		fmt.Fprint(stdout, treeUsage)
		if help {
			return exitOK
		}
		return exitUsage
	}
	if len(pos) != 1 || pos[0] != "sync" {
		fmt.Fprintf(stderr, "tsd tree: unknown command %q (want sync)\nRun 'tsd tree --help' for usage.\n", pos[0])
		return exitUsage
	}
	return runTool("tsd tree", "tsd tree sync", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return treeSync(ctx, c, log, stdout)
	})
}

// treeSync files every series of the index in every enabled tree.
func treeSync(ctx context.Context, c *config, log *slog.Logger, out io.Writer) (int, error) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return exitFailed, err
	}
	defer db.Close()
	u, st, err := openUIDTable(ctx, c, db, true, log)
	if err != nil {
		return exitFailed, err
	}
	tbls, err := storage.EnsureTables(ctx, db, tree.TableSpec(c.trees.table))
	if err != nil {
		return exitFailed, err
	}
	store, err := tree.NewStore(tbls[0])
	if err != nil {
		return exitFailed, err
	}
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return exitFailed, err
	}
	ix, err := index.Open(ctx, meta, u, &index.Options{Widths: st.Widths, RefreshInterval: -1, Logger: log})
	if err != nil {
		return exitFailed, fmt.Errorf("open series index: %w", err)
	}
	defer ix.Close()
	tm, err := tsmeta.New(meta)
	if err != nil {
		return exitFailed, err
	}
	svc, err := lookup.New(lookup.Options{UIDs: u, Index: ix, TSMeta: tm})
	if err != nil {
		return exitFailed, err
	}
	trees, err := store.EnabledTrees(ctx)
	if err != nil {
		return exitFailed, err
	}
	all, err := ix.Postings(ctx, index.NameKey, nil)
	if err != nil {
		return exitFailed, err
	}
	var tsuids []string
	ix.ForEach(all, func(s index.Series) bool {
		tsuids = append(tsuids, s.TSUID)
		return true
	})
	load := treeLoader(svc)
	filed, errs := 0, 0
	for _, t := range tsuids {
		if len(trees) == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return exitFailed, err
		}
		if err := store.ProcessAll(ctx, trees, []byte(t), load); err != nil {
			errs++
			log.Warn("tree sync: series not filed", "tsuid", fmt.Sprintf("%X", t), "err", err)
			continue
		}
		filed++
	}
	fmt.Fprintf(out, "tree sync: %d trees, %d series filed, %d errors\n", len(trees), filed, errs)
	if errs > 0 {
		return exitFailed, fmt.Errorf("%d series not filed (see the warnings)", errs)
	}
	return exitOK, nil
}

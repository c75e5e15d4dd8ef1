package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
	"github.com/tsd-db/tsd/uid/index/rebuild"
)

// indexUsage documents `tsd index`.
const indexUsage = `Usage: tsd index [--config FILE] [--KEY=VALUE]... rebuild

Builds the series index (in tsd.storage.hbase.meta_table) from the rows of
the data table, for example a table OpenTSDB wrote, so that queries find its
series. Every row key is read once; each series is registered with the hours
its rows cover. Series already in the index keep their ids and their spans
widen where needed, so running it again is harmless. On the embedded engine
the daemon must be stopped first: the store is locked while it runs.
Settings are the daemon's keys; the salt and UID widths come from the store's
record, and a store without one (an OpenTSDB table) records the flags' values
as the daemon's first start would: give an OpenTSDB table its settings,
e.g. --tsd.storage.format=opentsdb --tsd.storage.salt.width=0
--tsd.storage.salt.buckets=20.

Commands:
  rebuild                     scan the data table and register its series

Flags:
  --batch N                   series registered per batch (default 10000)
  --help, -h                  print this help

Output: one line "rebuilt index: R rows, S series registered, N series in
the index, B bad row keys skipped, G global annotation rows". Rows whose key
does not parse are logged and skipped; tsd index then exits 1.
`

// indexCmd is the parsed `tsd index` command line.
type indexCmd struct {
	args  []string
	batch int
	help  bool
}

// runIndex is `tsd index ...`.
func runIndex(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	ic, cl, err := parseIndexArgs(args, c.isBoolFlag)
	if err != nil {
		fmt.Fprintf(stderr, "tsd index: %v\nRun 'tsd index --help' for usage.\n", err)
		return exitUsage
	}
	if ic.help || len(ic.args) == 0 {
		fmt.Fprint(stdout, indexUsage)
		if ic.help {
			return exitOK
		}
		return exitUsage
	}
	if len(ic.args) != 1 || ic.args[0] != "rebuild" {
		fmt.Fprintf(stderr, "tsd index: unknown command %q (want rebuild)\nRun 'tsd index --help' for usage.\n", ic.args[0])
		return exitUsage
	}
	return runTool("tsd index", "tsd index rebuild", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return ic.rebuild(ctx, c, log, stdout)
	})
}

// parseIndexArgs takes --batch out, then separates the subcommand,
// --help and configuration flags.
func parseIndexArgs(args []string, isBool func(string) bool) (indexCmd, cmdline, error) {
	var ic indexCmd
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		name, value, has := cutFlag(args[i])
		if name != "batch" {
			rest = append(rest, args[i])
			continue
		}
		if !has {
			if i+1 >= len(args) {
				return ic, cmdline{}, fmt.Errorf("flag --batch needs a value")
			}
			i++
			value = args[i]
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 {
			return ic, cmdline{}, fmt.Errorf("--batch %q: want a positive integer", value)
		}
		ic.batch = n
	}
	var err error
	var cl cmdline
	ic.args, ic.help, cl, err = parseToolArgs(rest, "index", isBool, func(string) (bool, error) { return false, nil })
	return ic, cl, err
}

// cutFlag splits "--name=value", "-name" and the like; name is "" for a
// word that is not a flag.
func cutFlag(a string) (name, value string, has bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", "", false
	}
	name, value, has = strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
	return name, value, has
}

// rebuild opens the store, the UID table (recording the settings of a store
// that has none) and the index, and runs rebuild.RebuildIndex.
func (ic *indexCmd) rebuild(ctx context.Context, c *config, log *slog.Logger, out io.Writer) (int, error) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return exitFailed, err
	}
	defer db.Close()
	u, st, err := openUIDTable(ctx, c, db, true, log)
	if err != nil {
		return exitFailed, err
	}
	return ic.rebuildWith(ctx, c, db, u, st, log, out)
}

func (ic *indexCmd) rebuildWith(ctx context.Context, c *config, db storage.DB, u *uid.UIDs, st schema.Settings, log *slog.Logger, out io.Writer) (int, error) {
	sl, err := st.Salt()
	if err != nil {
		return exitFailed, err
	}
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return exitFailed, fmt.Errorf("open the data table %s: %w", c.dataTable, err)
	}
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return exitFailed, err
	}
	ix, err := index.Open(ctx, meta, u, &index.Options{Widths: st.Widths, RefreshInterval: -1, Logger: log})
	if err != nil {
		return exitFailed, fmt.Errorf("open series index: %w", err)
	}
	rs, err := rebuild.RebuildIndex(ctx, &rebuild.RebuildOptions{Data: data, Index: ix, Batch: ic.batch, Logger: log,
		Layout: rowkey.Layout{Widths: st.Widths, Salt: sl, MaxTags: c.maxTags}})
	n := ix.Len()
	if cerr := ix.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close series index: %w", cerr)
	}
	if err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(out, "rebuilt index: %d rows, %d series registered, %d series in the index, %d bad row keys skipped, %d global annotation rows\n",
		rs.Rows, rs.Registrations, n, rs.BadKeys, rs.GlobalRows)
	if rs.BadKeys > 0 {
		return exitFailed, fmt.Errorf("%d rows with bad keys skipped (see the warnings)", rs.BadKeys)
	}
	return exitOK, nil
}

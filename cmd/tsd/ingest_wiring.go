package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/ingest"
	"github.com/tsd-db/tsd/ingest/flush"
	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/ingest/service"
	"github.com/tsd-db/tsd/ingest/telnet"
	"github.com/tsd-db/tsd/ingest/wal"
	"github.com/tsd-db/tsd/internal/changes"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// ingestConfig holds the write path's settings (keys in keys.go).
type ingestConfig struct {
	fsyncInterval  time.Duration
	flushGrace     time.Duration
	headMaxMemory  int64
	autoCreateTagK bool
	autoCreateTagV bool
	telnetMaxLine  int
	retention      string // tsd.storage.retention, checked by retention.Parse
	seriesLimits   head.SeriesLimits
	// TSMeta tracking, OpenTSDB's tsd.core.meta keys.
	realtimeTS, tsuidTracking, tsuidIncrementing bool
	realtimeUID                                  bool // UIDMeta created times
}

// trackMode maps OpenTSDB's tracking keys to what the flusher keeps:
// incrementing (or realtime TSMeta, which OpenTSDB maintains by
// incrementing) counts points; tracking alone marks the series with 1.
func (c *ingestConfig) trackMode() tsmeta.Mode {
	switch {
	case c.tsuidIncrementing || c.realtimeTS:
		return tsmeta.TrackCount
	case c.tsuidTracking:
		return tsmeta.TrackLast
	}
	return tsmeta.TrackOff
}

// ingestStack is the write path, opened in dependency order and closed in
// reverse: UIDs, series index, head (and its log), flusher, compactor, and
// the protocol writer the API serves.
type ingestStack struct {
	db        storage.DB
	gate      *ingest.Gate // read-only state, consulted by every write path
	uids      *uid.UIDs
	index     *index.Index
	head      *head.Head
	flusher   *flush.Flusher
	compactor *flush.Compactor
	retention *flush.Retention
	tsmeta    *tsmeta.Store // the series' TSMeta in the meta table
	trees     treeFeed      // new series to the tree processor (tree_wiring.go)
	writer    *service.Writer
	telnet    *service.TelnetHandler
	// changes is marked by every write and delete of points, for the
	// PromQL answer cache (internal/changes).
	changes *changes.Tracker
	// stats is the daemon's one list of stats (collectStats), set by
	// wireMeta before anything is served; telnet's "stats" answers it.
	stats func() []api.Stat
	// moved hands the rows the flusher writes to the query reader.
	moved rowMover
}

// rowMover forwards the rows the flusher writes (flush.RowMover) to
// the query reader, which keeps the points it had decoded from the head
// as the stored rows' (query/read.Reader.RowMoved). The flusher starts
// before the reader is made; until then, and in a daemon that serves no
// queries, the rows go nowhere.
type rowMover struct{ r atomic.Pointer[read.Reader] }

func (m *rowMover) RowMoved(tsuid []byte, base int64, headFP uint64, key []byte, cells []storage.Cell) {
	if r := m.r.Load(); r != nil {
		r.RowMoved(tsuid, base, headFP, key, cells)
	}
}

// storeFS is the file system the head's log lives on: pebble's own, so a
// test or a fault-injecting engine sees every file the daemon writes.
func storeFS(db storage.DB) vfs.FS {
	if p, ok := db.(*pebble.DB); ok {
		return p.FS()
	}
	return vfs.Default
}

// openIngest opens the write path on db, whose record prepareStore read.
func (c *config) openIngest(ctx context.Context, db storage.DB, log *slog.Logger, rl *ratelog.Logger, shutdown func()) (_ *ingestStack, err error) {
	st := &ingestStack{db: db, gate: newGate(db), changes: new(changes.Tracker)}
	defer func() {
		if err != nil { // st, not the result: that is nil by now
			st.close(ctx, log)
		}
	}()
	if err = st.openUIDs(ctx, c, db, log); err != nil {
		return nil, err
	}
	if c.access.mode == modeReadOnly {
		// No head, log, flusher, compactor or retention job: nothing of
		// this daemon's reaches the store. Telnet answers only what
		// reads (version, stats, help, dropcaches, exit).
		st.telnet, err = service.NewTelnetHandler(nil, c.telnetOptions(shutdown, st))
		return st, err
	}
	if err = st.openHead(ctx, c, db, log); err != nil {
		return nil, err
	}
	if err = st.openWriter(c, log, rl, shutdown); err != nil {
		return nil, err
	}
	return st, nil
}

func (st *ingestStack) openUIDs(ctx context.Context, c *config, db storage.DB, log *slog.Logger) error {
	uidTbl, err := db.Table(ctx, c.uidTable)
	if err != nil {
		return err
	}
	s := c.settings
	ro := c.access.mode == modeReadOnly // assigns nothing
	st.uids, err = uid.New(uidTbl, &uid.Options{Widths: s.Widths, Format: s.Format, Logger: log,
		NoAutoCreateMetrics: ro || !c.autoCreateMetrics, NoAutoCreateTagKs: ro || !c.ingest.autoCreateTagK,
		NoAutoCreateTagVs: ro || !c.ingest.autoCreateTagV, CreatedFromName: c.ingest.realtimeUID})
	if err != nil {
		return fmt.Errorf("open uids: %w", err)
	}
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return err
	}
	st.index, err = index.Open(ctx, meta, st.uids, &index.Options{Widths: s.Widths, OnNewSeries: st.trees.offer})
	if err != nil {
		return fmt.Errorf("open series index: %w", err)
	}
	return nil
}

func (st *ingestStack) openHead(ctx context.Context, c *config, db storage.DB, log *slog.Logger) error {
	fs, s := storeFS(db), c.settings
	if err := fs.MkdirAll(c.dataDir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	writerID, err := flush.LoadWriterID(fs, c.dataDir)
	if err != nil {
		return err
	}
	st.head, err = head.OpenHead(fs, filepath.Join(c.dataDir, "wal"), &head.HeadOptions{
		Widths: s.Widths, MaxTags: c.maxTags, Registrar: st.index, Logger: log,
		MaxMemory: c.ingest.headMaxMemory, WAL: walOptions(c, log), SeriesLimits: c.ingest.seriesLimits,
		Changes: st.changes})
	if err != nil {
		return fmt.Errorf("open head: %w", err)
	}
	logReplay(log, st.head.ReplayStats())
	return st.openFlusher(ctx, c, db, writerID)
}

// logReplay reports what the head rebuilt from its log: after a crash,
// the acknowledged points not yet in the store are these samples. The log
// and the head have named each damaged place in lines of their own.
func logReplay(log *slog.Logger, rs head.ReplayStats) {
	log.Info("head replayed its log", "segments", rs.WAL.Segments, "records", rs.WAL.Records,
		"series", rs.Series, "samples", rs.Samples, "bad_records", rs.BadRecords,
		"orphan_samples", rs.OrphanSamples, "corrupt_records", rs.WAL.CorruptRecords,
		"corrupt_bytes", rs.WAL.CorruptBytes, "torn_bytes", rs.WAL.TornBytes)
}

func walOptions(c *config, log *slog.Logger) wal.Options {
	return wal.Options{FsyncInterval: c.ingest.fsyncInterval, Logger: log, ObserveSync: c.obs.walSyncObserver()}
}

func (st *ingestStack) openFlusher(ctx context.Context, c *config, db storage.DB, writerID uint32) error {
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return err
	}
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return err
	}
	layout, err := c.layout()
	if err != nil {
		return err
	}
	if st.tsmeta, err = tsmeta.New(meta); err != nil {
		return err
	}
	rollups, err := c.flushRollups(ctx, db)
	if err != nil {
		return err
	}
	st.flusher, err = flush.NewFlusher(st.head, &flush.FlushOptions{Table: data, Meta: meta, Layout: &layout,
		Format: c.settings.Format, WriterID: writerID, Grace: c.ingest.flushGrace, Gate: st.gate, Rollups: rollups,
		Tracker: tsmeta.NewTracker(st.tsmeta, c.ingest.trackMode(), writerID), Changes: st.changes, Moved: &st.moved})
	if err != nil {
		return fmt.Errorf("flusher: %w", err)
	}
	st.compactor, err = st.flusher.NewCompactor(nil)
	if err != nil {
		return fmt.Errorf("compactor: %w", err)
	}
	if err := st.openRetention(c, data, &layout); err != nil {
		return err
	}
	st.flusher.Start(0)
	st.compactor.Start()
	st.retention.Start()
	return nil
}

// openRetention makes the tsd.storage.retention job (a no-op without rules).
func (st *ingestStack) openRetention(c *config, data storage.Table, layout *rowkey.Layout) error {
	rules, err := retention.Parse(c.ingest.retention)
	if err != nil {
		return fmt.Errorf("tsd.storage.retention: %w", err)
	}
	rollups, err := c.rollupRetention(context.Background(), st.db, rules)
	if err != nil {
		return err
	}
	st.retention, err = flush.NewRetention(&flush.RetentionOptions{Table: data, UIDs: st.uids, Rules: rules.ForInterval(""),
		Layout: layout, Gate: st.gate, Rollups: rollups, Changes: st.changes})
	return err
}

func (st *ingestStack) openWriter(c *config, log *slog.Logger, rl *ratelog.Logger, shutdown func()) error {
	rollups, err := c.serviceRollups(context.Background(), st.db, st.index, st.changes)
	if err != nil {
		return err
	}
	data, err := st.db.Table(context.Background(), c.dataTable)
	if err != nil {
		return err
	}
	histograms, err := c.serviceHistograms(data, st.index, st.changes)
	if err != nil {
		return err
	}
	st.writer, err = service.NewWriter(service.Options{UIDs: st.uids, Head: st.head, Logger: log, RateLog: rl,
		MaxTags: c.maxTags, AllowSpecialChars: c.allowSpecialChars, Gate: st.gate, Rollups: rollups, Histograms: histograms})
	if err != nil {
		return err
	}
	st.telnet, err = service.NewTelnetHandler(st.writer, c.telnetOptions(shutdown, st))
	return err
}

// telnetOptions are the telnet handler's settings; a read-only daemon's
// dropcaches empties the UID caches itself (it has no writer).
func (c *config) telnetOptions(shutdown func(), st *ingestStack) service.TelnetOptions {
	o := service.TelnetOptions{
		Parser:       telnet.Options{MaxTags: c.maxTags, AllowSpecialChars: c.allowSpecialChars},
		MaxLineBytes: c.ingest.telnetMaxLine, Version: telnetVersion(versionInfo()),
		NoDieDieDie: c.noDieDieDie, Shutdown: shutdown,
		Auth: c.telnetAuth(),
		Stats: func(dst []byte) []byte {
			if st.stats == nil {
				return dst
			}
			return api.AppendStatsASCII(dst, st.stats(), time.Now().Unix())
		},
	}
	if st.writer == nil {
		o.DropCaches = st.uids.DropCaches
	}
	c.obs.wireTelnet(&o)
	return o
}

// telnetVersion is the telnet version reply, OpenTSDB's two lines
// (BuildData.revisionString and buildString, build-aux/gen_build_data.sh):
// the build date as "yyyy/MM/dd HH:mm:ss +0000" in UTC, user@host:repo.
func telnetVersion(v api.VersionInfo) string {
	date := v.Timestamp
	if s, err := strconv.ParseInt(v.Timestamp, 10, 64); err == nil {
		date = time.Unix(s, 0).UTC().Format("2006/01/02 15:04:05 -0700")
	}
	return "tsd " + v.Version + " built at revision " + v.ShortRevision + " (" + v.RepoStatus + ")\n" +
		"Built on " + date + " by " + v.User + "@" + v.Host + ":" + v.Repo
}

// close flushes every row still in the head to the store, drains the
// compaction queue and closes the head and the index. The API must be
// closed first so that no write arrives meanwhile. A read-only daemon
// (full disk) skips the flush and the drain: the rows stay in the log and
// the entries in the queue, for the next start.
func (st *ingestStack) close(ctx context.Context, log *slog.Logger) error {
	var errs []error
	readOnly := st.gate.Err()
	if st.retention != nil {
		st.retention.Stop()
	}
	if st.flusher != nil {
		st.flusher.Stop()
		if readOnly == nil {
			if _, err := st.flusher.Flush(ctx, time.Now(), true); err != nil {
				errs = append(errs, fmt.Errorf("final flush: %w", err))
			}
		}
	}
	if st.compactor != nil {
		st.compactor.Stop()
		if readOnly == nil {
			if _, err := st.compactor.Drain(ctx); err != nil {
				errs = append(errs, fmt.Errorf("drain compaction queue: %w", err))
			}
		}
	}
	if st.head != nil {
		errs = append(errs, st.head.Close())
	}
	if st.index != nil {
		errs = append(errs, st.index.Close())
	}
	return closeErrors(errs, readOnly, log)
}

// closeErrors joins the shutdown's errors, but only warns about what the
// store refused as read-only: that work waits in the log and the queue.
func closeErrors(errs []error, readOnly error, log *slog.Logger) error {
	var left []error
	for i, err := range errs {
		if err != nil && readOnlyLeft(err) {
			left, errs[i] = append(left, err), nil
		}
	}
	if readOnly == nil && len(left) > 0 {
		readOnly = errors.Join(left...)
	}
	if readOnly != nil {
		log.Warn("read-only at shutdown: unflushed points stay in the write-ahead log for the next start",
			"reason", readOnly)
	}
	err := errors.Join(errs...)
	if err != nil {
		log.Error("closing the write path", "err", err)
	}
	return err
}

// parseBytes reads a byte size: digits with an optional unit (B, KiB, MiB,
// GiB, TiB, or KB, MB, GB, TB as powers of 1000); -1 means unlimited.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return -1, nil
	}
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || i == 0 {
		return 0, fmt.Errorf("invalid size %q: want digits and a unit such as 2GiB", s)
	}
	mult, ok := byteUnits[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return 0, fmt.Errorf("invalid size unit in %q: want B, KiB, MiB, GiB, TiB, KB, MB, GB or TB", s)
	}
	return n * mult, nil
}

var byteUnits = map[string]int64{"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}

// formatBytes prints a size in the largest binary unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n > 0 && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// bytesKey is a byte-size setting.
func bytesKey(dst *int64, name string, def int64, desc string) *key {
	return newKey(dst, name, def, "size", parseBytes, formatBytes, desc)
}

// checkRetention validates tsd.storage.retention when it is set.
func checkRetention(s string) (string, error) {
	_, err := retention.Parse(s)
	return s, err
}

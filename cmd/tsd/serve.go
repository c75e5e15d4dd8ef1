package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/bigtable"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/tree"
)

// serve opens the store, makes sure its tables and settings record exist,
// and serves the API until ctx ends (SIGINT or SIGTERM) or the listener
// fails; then it shuts the server down and closes the store.
func serve(ctx context.Context, c *config, log *slog.Logger) (err error) {
	rl := ratelog.New(ratelog.Options{Logger: log})
	c.obs.metrics, c.obs.rlog = api.NewMetrics(), rl
	if c.fds, err = planFDs(c.network.connLimit, openFileLimit(), c.engine); err != nil {
		return err
	}
	db, err := c.openStore(ctx, log, rl)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
		}
	}()
	if err := c.prepareStore(ctx, db, log); err != nil {
		return err
	}
	ctx, shutdown := context.WithCancel(ctx) // telnet diediedie, when allowed
	defer shutdown()
	if a, err := c.openAuth(ctx, log, rl); err != nil {
		return err
	} else if a != nil {
		defer a.Close()
	}
	st, err := c.openIngest(ctx, db, log, rl, shutdown)
	if err != nil {
		return err
	}
	defer func() {
		// The server is closed by now: flush with a fresh context, ctx is done.
		err = errors.Join(err, st.close(context.Background(), log))
	}()
	opts := c.apiOptions(log, rl)
	opts.Telnet, opts.Ingest, opts.Gate = st.telnet, st.writer, st.gate
	access, closeAccess, err := c.obs.openAccessLog()
	if err != nil {
		return err
	}
	defer closeAccess() // after the server, which writes to it, is closed
	c.obs.wireAPI(&opts, access)
	rs, err := c.openRead(ctx, db, st, log)
	if err != nil {
		return err
	}
	opts.Annotations = rs.notes
	if opts.Last, err = openLast(rs, st); err != nil {
		return err
	}
	if opts.Query, err = c.openQuery(rs, st, log); err != nil {
		return err
	}
	if opts.PromQL, err = c.openPromQL(rs, st, log); err != nil {
		return err
	}
	opts.Changes = st.changes
	opts.Reading = rs.reader.Reading
	// After Query: its reader's counters are in the stats. srv is set
	// before it serves, so before any stats request.
	var served serverRef
	c.wireMeta(&opts, st, &served)
	trees, stopTrees, err := c.openTrees(ctx, db, st, opts.Meta, log, rl)
	if err != nil {
		return err
	}
	defer stopTrees()
	opts.Trees = trees
	c.wireStatus(&opts, st)
	c.wireRollupRebuild(&opts, st, log)
	c.wireCompact(&opts, st, log)
	srv, err := api.New(opts)
	if err != nil {
		return err
	}
	served.Store(srv)
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	log.Info("listening on "+ln.Addr().String(), "addr", ln.Addr().String(), "tls", c.network.tls.CertFile != "",
		"tls_required", c.network.tls.Required)
	stopHUP := reloadOnHUP(srv, log)
	defer stopHUP()
	scraper := startSelfScrape(c.obs.selfScrape, srv.Gather, st.writer, selfInstance(ln.Addr()), log)
	defer scraper.close() // before the writer closes (st.close runs later)
	return runServer(ctx, srv, ln, log)
}

// reloadOnHUP makes SIGHUP reload what the server reads from files (the
// TLS certificates) until the returned stop is called.
func reloadOnHUP(srv *api.Server, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-done:
				return
			case <-hup:
				log.Info("SIGHUP: reloading certificates")
				srv.Reload() // an error is logged and keeps the old ones
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-exited
	}
}

// runServer serves ln until ctx ends or Serve fails, then closes srv.
func runServer(ctx context.Context, srv *api.Server, ln net.Listener, log *slog.Logger) error {
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
		log.Info("shutting down")
		srv.Close()
		<-served
		return nil
	case err := <-served:
		srv.Close()
		return err
	}
}

// openStore opens the configured engine; rl takes its repeated warnings
// (nil: one of its own).
func (c *config) openStore(ctx context.Context, log *slog.Logger, rl *ratelog.Logger) (storage.DB, error) {
	switch c.engine {
	case "bigtable":
		db, err := bigtable.Open(ctx, bigtable.Options{
			Project: c.bigtableProject, Instance: c.bigtableInstance,
			CreateTables: bigtable.Bool(c.bigtableCreate), EmulatorHost: c.bigtableEmulator,
			ObserveRequest: c.obs.bigtableObserver(),
		})
		if err != nil {
			return nil, err
		}
		log.Info("opened store", "engine", "bigtable", "project", c.bigtableProject,
			"instance", c.bigtableInstance, "emulator", c.bigtableEmulator)
		return db, nil
	default:
		db, err := pebble.Open(c.dataDir, &pebble.Options{Logger: log, FS: c.fs, RateLog: rl, MaxOpenFiles: c.fds.storeFiles,
			MinFreeBytes: c.disk.pebbleMinFree(), FreeCheckInterval: c.disk.checkInterval,
			ObserveWriteStall: c.obs.pebbleStallObserver()})
		if err != nil {
			return nil, err
		}
		c.obs.registerPebbleWAL(db)
		log.Info("opened store", "engine", "pebble", "directory", c.dataDir, "read_only", db.WriteErr() != nil)
		return db, nil
	}
}

// prepareStore ensures the data, UID and meta tables exist and that the
// settings recorded with the store agree with the configured ones (the
// first start records them).
func (c *config) prepareStore(ctx context.Context, db storage.DB, log *slog.Logger) error {
	if c.access.mode == modeReadOnly {
		return c.checkStore(ctx, db, log)
	}
	tbls, err := storage.EnsureTables(ctx, db,
		schema.DataTableSpec(c.dataTable), uid.TableSpec(c.uidTable), schema.MetaTableSpec(c.metaTable), tree.TableSpec(c.trees.table))
	if err != nil {
		return err
	}
	uidTbl, meta := tbls[1], tbls[2]
	s, err := schema.EnsureRecord(ctx, meta, uid.MaxIDProbe(uidTbl), c.storeSettings())
	if errors.Is(err, storage.ErrCorruption) && errors.As(err, new(*storage.DamagedRangeError)) {
		// The record's row is in a damaged file: serve what can be read
		// with the configured settings, which the first start recorded.
		log.Error("store settings record unreadable (damaged store); using the configured settings until the store is repaired (tsd repair)", "err", err)
		s, err = c.storeSettings(), nil
	}
	if err != nil {
		return fmt.Errorf("store settings: %w", err)
	}
	c.settings = s
	if err := c.prepareRollups(ctx, db, meta, log); err != nil {
		return err
	}
	log.Info("store ready", "format", s.Format.String(), "salt_width", s.SaltWidth,
		"salt_buckets", s.SaltBuckets, "uid_widths", fmt.Sprintf("%d/%d/%d", s.Widths.Metric, s.Widths.TagK, s.Widths.TagV))
	return nil
}

// checkStore is prepareStore for a read-only daemon: it creates nothing
// and writes no record, so the store must have been prepared by a
// writer.
func (c *config) checkStore(ctx context.Context, db storage.DB, log *slog.Logger) error {
	uidTbl, err := db.Table(ctx, c.uidTable)
	if err != nil {
		return fmt.Errorf("tsd.mode=ro: %w", err)
	}
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return fmt.Errorf("tsd.mode=ro: %w", err)
	}
	s, exists, err := schema.CheckRecord(ctx, meta, uid.MaxIDProbe(uidTbl), c.storeSettings())
	if err != nil {
		return fmt.Errorf("store settings: %w", err)
	}
	if !exists {
		return errors.New("tsd.mode=ro: the store has no settings record; start a writer (tsd.mode=rw) on it first")
	}
	c.settings = s
	if c.query.allowDelete {
		log.Warn("tsd.http.query.allow_delete is ignored with tsd.mode=ro: a read-only daemon deletes nothing")
	}
	log.Info("store ready, read-only (tsd.mode=ro)", "format", s.Format.String(), "salt_width", s.SaltWidth,
		"salt_buckets", s.SaltBuckets)
	return nil
}

// apiOptions wires the network and query admission settings into
// api.Options, with the daemon's one rate-limited log.
func (c *config) apiOptions(log *slog.Logger, rl *ratelog.Logger) api.Options {
	opts := api.Options{
		Addr:                 net.JoinHostPort(c.bind, strconv.Itoa(c.port)),
		Version:              versionInfo(),
		Logger:               log,
		RateLog:              rl,
		WriteTimeout:         noneIfZero(c.writeTimeout),
		MinWriteRate:         c.writeMinRate,
		MaxConcurrentQueries: c.query.maxConcurrent,
		MaxQueuedQueries:     noneIfZeroInt(c.query.maxQueued),
	}
	c.wireConns(&opts, log)
	c.wireAuth(&opts)
	c.wireAccess(&opts)
	return opts
}

// noneIfZero maps a key's 0 ("none") to the -1 api options read as none
// (their 0 is the default).
func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// noneIfZeroInt is noneIfZero for counts.
func noneIfZeroInt(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// serverRef is the API server, once made, for the stats closure made
// before it.
type serverRef = atomic.Pointer[api.Server]

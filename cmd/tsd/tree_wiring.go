package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid/index/lookup"
	"github.com/tsd-db/tsd/uid/tree"
)

// treeConfig is OpenTSDB's tree settings.
type treeConfig struct {
	table      string // tsd.storage.hbase.tree_table
	processing bool   // tsd.core.tree.enable_processing
}

// treeFeed passes the series index's new series to the tree processor
// while the daemon has one; before it exists (the head's replay) and
// without tsd.core.tree.enable_processing it passes nothing.
type treeFeed struct {
	p atomic.Pointer[tree.Processor]
}

// offer is the index's OnNewSeries.
func (f *treeFeed) offer(tsuid []byte) {
	if p := f.p.Load(); p != nil {
		p.Offer(tsuid)
	}
}

// treeLoader reads what a tree's rules need of a series from the lookup
// service: its TSMeta with its UIDs' UIDMeta.
func treeLoader(svc *lookup.Service) func(ctx context.Context, tsuid []byte) (*tree.Meta, error) {
	return func(ctx context.Context, tsuid []byte) (*tree.Meta, error) {
		m, err := svc.GetTSMeta(ctx, tsuid)
		if err != nil {
			return nil, err
		}
		return api.TreeMetaOf(m), nil
	}
}

// openTrees opens the tree table for /api/tree and, with
// tsd.core.tree.enable_processing, starts the processor the series index
// feeds; stop ends it. A read-only daemon serves no tree route and opens
// nothing.
func (c *config) openTrees(ctx context.Context, db storage.DB, st *ingestStack, svc *lookup.Service, log *slog.Logger, rl *ratelog.Logger) (*tree.Store, func(), error) {
	if c.access.mode == modeReadOnly {
		return nil, func() {}, nil
	}
	tbl, err := db.Table(ctx, c.trees.table)
	if err != nil {
		return nil, nil, fmt.Errorf("open the tree table %s: %w", c.trees.table, err)
	}
	s, err := tree.NewStore(tbl)
	if err != nil {
		return nil, nil, err
	}
	if !c.trees.processing || svc == nil || st.head == nil {
		return s, func() {}, nil
	}
	p, err := tree.NewProcessor(s, tree.ProcessorOptions{Load: treeLoader(svc), RateLog: rl})
	if err != nil {
		return nil, nil, err
	}
	st.trees.p.Store(p)
	log.Info("tree processing on: new series are filed in every enabled tree")
	return s, func() {
		st.trees.p.Store(nil)
		p.Close()
	}, nil
}

// treeStats lists the tree processor's counters, when processing is on.
func (l *statList) treeStats(f *treeFeed) {
	p := f.p.Load()
	if p == nil {
		return
	}
	s := p.Stats()
	l.add("tsd.tree.processed", "New series filed in the enabled trees (tsd.core.tree.enable_processing).", true, s.Processed)
	l.add("tsd.tree.dropped", "New series not filed in the trees because the processing queue was full (tsd tree sync files them).", true, s.Dropped)
	l.add("tsd.tree.errors", "New series a tree failed to file (a read or write error).", true, s.Errors)
	l.add("tsd.tree.queued", "New series waiting to be filed in the trees.", false, s.Queued)
}

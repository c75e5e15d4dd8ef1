package main

import (
	"github.com/tsd-db/tsd/api"
	"github.com/tsd-db/tsd/internal/retention"
)

// wireStatus sets opts.Status, what /api/status (and the web UI's Status
// page) reports: the store's settings as prepareStore read them from its
// record, its tables, the retention rules, the rollup tables in use, and
// the head and its log when this daemon writes.
func (c *config) wireStatus(opts *api.Options, st *ingestStack) {
	fixed := api.Status{
		Store: api.StoreStatus{
			Engine: c.engine, Format: c.settings.Format.String(),
			SaltWidth: c.settings.SaltWidth, SaltBuckets: c.settings.SaltBuckets,
			UIDWidths: api.UIDWidths{Metric: c.settings.Widths.Metric, TagK: c.settings.Widths.TagK, TagV: c.settings.Widths.TagV},
			DataTable: c.dataTable, UIDTable: c.uidTable, MetaTable: c.metaTable,
		},
	}
	if rules, err := retention.Parse(c.ingest.retention); err == nil { // checked when the key was read
		for i := range rules.Len() {
			r := rules.Rule(i)
			p := r.Pattern
			if r.Interval != "" {
				p = "@" + r.Interval + " " + p
			}
			fixed.Retention = append(fixed.Retention, api.Rule{Pattern: p, Keep: retention.FormatKeep(r.Keep)})
		}
	}
	if cfg := c.rollups.active; cfg != nil {
		for _, iv := range cfg.Intervals {
			fixed.Rollups = append(fixed.Rollups, api.RollupAt{Interval: iv.Name, RowSpan: iv.RowSpan,
				Table: iv.Table, PreAggTable: iv.PreAggTable, Default: iv.Default})
		}
	}
	fsync := c.ingest.fsyncInterval.String()
	opts.Status = func() api.Status {
		s := fixed
		if st.head == nil {
			return s
		}
		s.Head = &api.HeadStatus{MaxMemory: st.head.Options().MaxMemory}
		if base, ok := st.head.OldestHour(); ok {
			s.Head.OldestHour = base / 1000 // the head keeps milliseconds
		}
		s.WAL = &api.WALStatus{Dir: st.head.LogDir(), FsyncInterval: fsync}
		fs := st.head.FS()
		if names, err := fs.List(s.WAL.Dir); err == nil {
			for _, n := range names {
				if fi, err := fs.Stat(fs.PathJoin(s.WAL.Dir, n)); err == nil && !fi.IsDir() {
					s.WAL.Files++
					s.WAL.Bytes += fi.Size()
				}
			}
		}
		return s
	}
}

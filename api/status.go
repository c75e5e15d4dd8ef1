package api

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/uid/index/lookup"
)

// Status is what /api/status reports beside /api/stats' counters: the
// store's settings as its record holds them, retention and rollups, and
// the state of the head and its write-ahead log. The web UI's Status
// page shows it.
type Status struct {
	Store     StoreStatus `json:"store"`
	Retention []Rule      `json:"retention"`
	Rollups   []RollupAt  `json:"rollups"`
	// Head and WAL are nil in a daemon without a write path (tsd.mode=ro).
	Head *HeadStatus `json:"head"`
	WAL  *WALStatus  `json:"wal"`
}

// StoreStatus is the store's engine, settings and tables.
type StoreStatus struct {
	Engine      string    `json:"engine"` // "pebble" or "bigtable"
	Format      string    `json:"format"` // "dense" or "opentsdb"
	SaltWidth   int       `json:"salt_width"`
	SaltBuckets int       `json:"salt_buckets"`
	UIDWidths   UIDWidths `json:"uid_widths"`
	DataTable   string    `json:"data_table"`
	UIDTable    string    `json:"uid_table"`
	MetaTable   string    `json:"meta_table"`
}

// UIDWidths are the bytes of each kind of UID.
type UIDWidths struct {
	Metric int `json:"metric"`
	TagK   int `json:"tagk"`
	TagV   int `json:"tagv"`
}

// Rule is one retention rule: metrics matching Pattern are kept for
// Keep ("30d", "forever").
type Rule struct {
	Pattern string `json:"pattern"`
	Keep    string `json:"keep"`
}

// RollupAt is one rollup interval and the tables that hold it.
type RollupAt struct {
	Interval    string `json:"interval"`
	RowSpan     string `json:"row_span"`
	Table       string `json:"table"`
	PreAggTable string `json:"preagg_table"`
	Default     bool   `json:"default"` // the raw data's interval
}

// HeadStatus is the in-memory head's state.
type HeadStatus struct {
	MaxMemory  int64 `json:"max_memory"`  // bytes before writers are slowed
	OldestHour int64 `json:"oldest_hour"` // Unix seconds of the oldest unflushed hour; 0: none
}

// WALStatus is the write-ahead log's state on disk.
type WALStatus struct {
	Dir           string `json:"dir"`
	Files         int    `json:"files"`
	Bytes         int64  `json:"bytes"`
	FsyncInterval string `json:"fsync_interval"`
}

// statusAnswer is /api/status's JSON: the mode, then Status.
type statusAnswer struct {
	Mode string `json:"mode"`
	Status
}

// handleStatus is /api/status: Options.Status's figures as JSON.
func (s *Server) handleStatus(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeMethodNotAllowed(ctx)
		return
	}
	if s.opts.Status == nil {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/status", "this server has no store")
		return
	}
	a := statusAnswer{Mode: s.opts.Mode.String(), Status: s.opts.Status()}
	if a.Retention == nil {
		a.Retention = []Rule{}
	}
	if a.Rollups == nil {
		a.Rollups = []RollupAt{}
	}
	b, err := json.Marshal(&a)
	if err != nil {
		s.log.Error("api: /api/status", "err", err) // unreachable: plain structs
		writeError(ctx, fasthttp.StatusInternalServerError, "Internal error", "")
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, b)
}

// seriesSpan is /api/status/series's JSON.
type seriesSpan struct {
	TSUID  string            `json:"tsuid"`
	Metric string            `json:"metric"`
	Tags   map[string]string `json:"tags"`
	// Known is false when the index does not know the series' hours;
	// First and Last are then 0.
	Known bool `json:"known"`
	// First and Last are the base times (Unix seconds) of the first and
	// last hours that may hold the series' points.
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// handleSeriesSpan is /api/status/series?tsuid=<hex>: the hours the
// series index records for one series, so a reader can find its first
// point without reading every hour before it.
func (a *metaAPI) handleSeriesSpan(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeMethodNotAllowed(ctx)
		return
	}
	tsuid, err := a.svc.ParseTSUID(string(ctx.QueryArgs().Peek("tsuid")))
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Invalid tsuid", err.Error())
		return
	}
	se, err := a.svc.Describe(ctx, string(tsuid))
	if errors.Is(err, lookup.ErrUnknownUID) {
		writeError(ctx, fasthttp.StatusNotFound, "Unknown series", err.Error())
		return
	}
	if err != nil {
		a.internalError(ctx, "status/series", err)
		return
	}
	spans, err := a.svc.SearchSpans(ctx, &lookup.Query{Metric: se.Metric, Tags: se.Tags})
	if err != nil {
		a.internalError(ctx, "status/series", err)
		return
	}
	out := seriesSpan{TSUID: strings.ToUpper(se.TSUID), Metric: se.Metric, Tags: map[string]string{}}
	found := false
	for _, sp := range spans {
		if sp.TSUID == string(tsuid) {
			found, out.Known = true, sp.Known
			if sp.Known {
				out.First, out.Last = sp.FirstMs/1000, (sp.LastMs+1)/1000-3600
			}
		}
	}
	if !found {
		writeError(ctx, fasthttp.StatusNotFound, "Unknown series", "the series index holds no series "+out.TSUID)
		return
	}
	for _, p := range se.Tags {
		out.Tags[p.Key] = p.Value
	}
	b, _ := json.Marshal(&out) // plain fields: cannot fail
	writeJSON(ctx, fasthttp.StatusOK, b)
}

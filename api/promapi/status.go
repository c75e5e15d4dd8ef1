package promapi

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// RuntimeInfo is what /api/v1/status/runtimeinfo reports beside the Go
// runtime's own figures; the daemon fills it (the environment and the
// process's directory are its to read).
type RuntimeInfo struct {
	StartTime        time.Time // when the daemon started; also lastConfigTime
	CWD, Hostname    string
	GOGC, GODEBUG    string // the environment's values, as Prometheus shows them
	StorageRetention string // the retention rules, or "" for none
}

// TSDBStat is one figure of /api/v1/status/tsdb's lists.
type TSDBStat struct {
	Name  string
	Value uint64
}

// TSDBStatus is /api/v1/status/tsdb's data, in Prometheus's shape.
type TSDBStatus struct {
	NumSeries               uint64 // headStats.numSeries
	NumLabelPairs           int    // headStats.numLabelPairs
	ChunkCount              int64  // headStats.chunkCount
	MinTime, MaxTime        int64  // headStats' time range, ms
	SeriesCountByMetricName []TSDBStat
	// The other lists of Prometheus's answer, written [] when nil.
	LabelValueCountByLabelName, MemoryInBytesByLabelName, SeriesCountByLabelValuePair []TSDBStat
}

// maxTSDBLimit is the largest limit /api/v1/status/tsdb takes, as in
// Prometheus's serveTSDBStatus.
const maxTSDBLimit = 10000

// Flags serves /api/v1/status/flags: Prometheus's command-line flags that
// tsd has a setting for, under Prometheus's names, their values written
// as Prometheus writes them (durations as model.Duration).
func (a *API) Flags(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	o := &a.opts
	flags := map[string]string{
		"enable-feature":              o.Features,
		"query.lookback-delta":        model.Duration(o.LookbackDelta).String(),
		"query.max-samples":           strconv.Itoa(o.MaxSamples),
		"query.timeout":               model.Duration(o.Timeout).String(),
		"storage.tsdb.retention.time": o.Runtime.StorageRetention,
	}
	a.respond(ctx, nil, nil, func(b []byte) []byte { return jsonw.HTML.AppendSortedMap(b, flags) })
}

// RuntimeInfo serves /api/v1/status/runtimeinfo with Prometheus's fields.
// tsd reloads no configuration: reloadConfigSuccess is true and
// lastConfigTime is the start; corruptionCount is 0 (damage is counted in
// /api/stats).
func (a *API) RuntimeInfo(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	ri := &a.opts.Runtime
	a.respond(ctx, nil, nil, func(b []byte) []byte {
		b = append(b, `{"startTime":`...)
		b = appendTime(b, ri.StartTime)
		b = append(b, `,"CWD":`...)
		b = jsonw.HTML.AppendString(b, ri.CWD)
		b = append(b, `,"hostname":`...)
		b = jsonw.HTML.AppendString(b, ri.Hostname)
		b = append(b, `,"serverTime":`...)
		b = appendTime(b, time.Now().UTC())
		b = append(b, `,"reloadConfigSuccess":true,"lastConfigTime":`...)
		b = appendTime(b, ri.StartTime)
		b = append(b, `,"corruptionCount":0,"goroutineCount":`...)
		b = strconv.AppendInt(b, int64(runtime.NumGoroutine()), 10)
		b = append(b, `,"GOMAXPROCS":`...)
		b = strconv.AppendInt(b, int64(runtime.GOMAXPROCS(0)), 10)
		b = append(b, `,"GOMEMLIMIT":`...)
		b = strconv.AppendInt(b, debug.SetMemoryLimit(-1), 10)
		b = append(b, `,"GOGC":`...)
		b = jsonw.HTML.AppendString(b, ri.GOGC)
		b = append(b, `,"GODEBUG":`...)
		b = jsonw.HTML.AppendString(b, ri.GODEBUG)
		b = append(b, `,"storageRetention":`...)
		b = jsonw.HTML.AppendString(b, ri.StorageRetention)
		return append(b, '}')
	})
}

// appendTime appends t as encoding/json writes a time.Time (RFC 3339
// with nanoseconds), as Prometheus's answer does.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// TSDBStatus serves /api/v1/status/tsdb: the head's series and the
// metrics with the most series (limit, default 10, at most 10,000, as
// Prometheus's serveTSDBStatus).
func (a *API) TSDBStatus(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	limit := 10
	if s := (form{ctx}).get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil || n < 1:
			writeError(ctx, badData(errors.New("limit must be a positive number")))
			return
		case n > maxTSDBLimit:
			writeError(ctx, badData(fmt.Errorf("limit must not exceed %d", maxTSDBLimit)))
			return
		}
		limit = n
	}
	var st TSDBStatus
	if a.opts.TSDBStatus != nil {
		var err error
		if st, err = a.opts.TSDBStatus(a.opts.Context, limit); err != nil {
			writeError(ctx, &apiError{errorInternal, err})
			return
		}
	}
	a.respond(ctx, nil, nil, func(b []byte) []byte {
		b = append(b, `{"headStats":{"numSeries":`...)
		b = strconv.AppendUint(b, st.NumSeries, 10)
		b = append(b, `,"numLabelPairs":`...)
		b = strconv.AppendInt(b, int64(st.NumLabelPairs), 10)
		b = append(b, `,"chunkCount":`...)
		b = strconv.AppendInt(b, st.ChunkCount, 10)
		b = append(b, `,"minTime":`...)
		b = strconv.AppendInt(b, st.MinTime, 10)
		b = append(b, `,"maxTime":`...)
		b = strconv.AppendInt(b, st.MaxTime, 10)
		b = append(b, `},"seriesCountByMetricName":`...)
		b = appendTSDBStats(b, st.SeriesCountByMetricName)
		b = append(b, `,"labelValueCountByLabelName":`...)
		b = appendTSDBStats(b, st.LabelValueCountByLabelName)
		b = append(b, `,"memoryInBytesByLabelName":`...)
		b = appendTSDBStats(b, st.MemoryInBytesByLabelName)
		b = append(b, `,"seriesCountByLabelValuePair":`...)
		b = appendTSDBStats(b, st.SeriesCountByLabelValuePair)
		return append(b, '}')
	})
}

// appendTSDBStats appends a list as [{"name":..,"value":..}], [] when empty.
func appendTSDBStats(b []byte, l []TSDBStat) []byte {
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonw.HTML.AppendString(b, s.Name)
		b = append(b, `,"value":`...)
		b = strconv.AppendUint(b, s.Value, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

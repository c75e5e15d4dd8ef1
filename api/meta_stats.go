package api

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// Stat is one of tsd's own counters or gauges, as /api/stats and /metrics
// report it.
type Stat struct {
	// Name is OpenTSDB's dotted metric name, e.g. "tsd.uid.cache-hit";
	// /metrics turns it into tsd_uid_cache_hit (plus _total for counters).
	Name string
	// Help is one line for /metrics' HELP.
	Help string
	// Counter is true for a count that only grows, false for a gauge.
	Counter bool
	// Value is the current value.
	Value float64
	// Tags qualify the value, e.g. kind=metrics; /api/stats adds host.
	Tags []StatTag
}

// StatTag is one tag of a Stat.
type StatTag struct {
	Key, Value string
}

// hostName is the host tag of /api/stats, as OpenTSDB's StatsCollector
// adds it.
var hostName = sync.OnceValue(func() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
})

// stats returns the current stats, or none without Options.Stats.
func (a *metaAPI) stats() []Stat {
	if a.s.opts.Stats == nil {
		return nil
	}
	return a.s.opts.Stats()
}

// handleStats is /api/stats: OpenTSDB's array of {"metric","timestamp",
// "value","tags"}, values as strings. Its jvm, threads and region_clients
// sub-pages answer with the Go runtime's equivalents (meta_stats_pages.go),
// query with the running and recent queries (query_stats.go). Any other path under /api/stats is the
// stats, as in StatsRpc.execute.
func (a *metaAPI) handleStats(ctx *fasthttp.RequestCtx) {
	if !getOrPost(ctx) {
		return
	}
	switch sub := subEndpoint(ctx.Path()); {
	case a.handleStatsPage(ctx, sub):
		return
	case sub == "query":
		a.handleStatsQuery(ctx)
		return
	}
	now := time.Now().Unix()
	dst := []byte{'['}
	for i, st := range a.stats() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendStatJSON(dst, &st, now)
	}
	writeJSON(ctx, fasthttp.StatusOK, append(dst, ']'))
}

func appendStatJSON(dst []byte, st *Stat, now int64) []byte {
	dst = append(dst, `{"metric":`...)
	dst = jsonw.JSON.AppendString(dst, st.Name)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, now, 10)
	dst = append(dst, `,"value":`...)
	dst = jsonw.JSON.AppendString(dst, strconv.FormatFloat(st.Value, 'f', -1, 64))
	tags := append(slices.Clone(st.Tags), StatTag{"host", hostName()})
	slices.SortFunc(tags, func(a, b StatTag) int { return strings.Compare(a.Key, b.Key) })
	dst = append(dst, `,"tags":`...)
	return append(jsonw.AppendTags(jsonw.JSON, dst, tags), '}')
}

// AppendStatsASCII appends stats as OpenTSDB's StatsCollector writes them
// for the telnet "stats" command, a line each: "tsd.<name> <now>
// <value>[ <tag>=<v>...] host=<host>\n", the stat's own tags before the
// host tag.
func AppendStatsASCII(dst []byte, stats []Stat, now int64) []byte {
	for i := range stats {
		st := &stats[i]
		dst = append(dst, st.Name...)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, now, 10)
		dst = append(dst, ' ')
		dst = strconv.AppendFloat(dst, st.Value, 'f', -1, 64)
		for _, t := range st.Tags {
			dst = append(append(append(append(dst, ' '), t.Key...), '='), t.Value...)
		}
		dst = append(append(dst, " host="...), hostName()...)
		dst = append(dst, '\n')
	}
	return dst
}

// promName turns "tsd.uid.cache-hit" into "tsd_uid_cache_hit", adding
// _total to counters.
func promName(st *Stat) string {
	n := promLabel(st.Name)
	if st.Counter && !strings.HasSuffix(n, "_total") {
		n += "_total"
	}
	return n
}

// promLabel replaces every character a Prometheus name may not hold with _.
func promLabel(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

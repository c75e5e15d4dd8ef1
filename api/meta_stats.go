package api

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
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

// statsPages are StatsRpc's own sub-pages, not built yet (501); any other
// path under /api/stats is the stats, as in StatsRpc.execute.
var statsPages = map[string]bool{"jvm": true, "query": true, "threads": true, "region_clients": true}

// handleStats is /api/stats: OpenTSDB's array of {"metric","timestamp",
// "value","tags"}, values as strings. Its JVM, query, thread and region
// client sub-pages answer 501.
func (a *metaAPI) handleStats(ctx *fasthttp.RequestCtx) {
	if !getOrPost(ctx) {
		return
	}
	if sub := subEndpoint(ctx.Path()); statsPages[sub] {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/stats/"+sub, "")
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
	dst = appendJSONString(dst, st.Name)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, now, 10)
	dst = append(dst, `,"value":`...)
	dst = appendJSONString(dst, strconv.FormatFloat(st.Value, 'f', -1, 64))
	tags := append(slices.Clone(st.Tags), StatTag{"host", hostName()})
	slices.SortFunc(tags, func(a, b StatTag) int { return strings.Compare(a.Key, b.Key) })
	dst = append(dst, `,"tags":{`...)
	for i, t := range tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, t.Key)
		dst = append(dst, ':')
		dst = appendJSONString(dst, t.Value)
	}
	return append(dst, "}}"...)
}

// contentTypeProm is the Prometheus text exposition format, version 0.0.4.
const contentTypeProm = "text/plain; version=0.0.4; charset=utf-8"

// handleMetrics is GET /metrics: the same stats in Prometheus' text
// format, one HELP and TYPE per name, names tsd_..., counters ending in
// _total.
func (a *metaAPI) handleMetrics(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeMethodNotAllowed(ctx)
		return
	}
	ctx.SetContentType(contentTypeProm)
	ctx.SetBody(appendPromText(nil, a.stats()))
}

// appendPromText groups stats by name, in order of first appearance.
func appendPromText(dst []byte, stats []Stat) []byte {
	var order []string
	byName := map[string][]int{}
	for i := range stats {
		n := promName(&stats[i])
		if _, ok := byName[n]; !ok {
			order = append(order, n)
		}
		byName[n] = append(byName[n], i)
	}
	for _, n := range order {
		first := &stats[byName[n][0]]
		typ := "gauge"
		if first.Counter {
			typ = "counter"
		}
		dst = append(dst, "# HELP "+n+" "...)
		dst = append(dst, promEscapeHelp(first.Help)...)
		dst = append(dst, "\n# TYPE "+n+" "+typ+"\n"...)
		for _, i := range byName[n] {
			dst = appendPromSample(dst, n, &stats[i])
		}
	}
	return dst
}

func appendPromSample(dst []byte, name string, st *Stat) []byte {
	dst = append(dst, name...)
	if len(st.Tags) > 0 {
		dst = append(dst, '{')
		for i, t := range st.Tags {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, promLabel(t.Key)...)
			dst = append(dst, `="`...)
			dst = append(dst, promEscapeValue(t.Value)...)
			dst = append(dst, '"')
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ' ')
	dst = strconv.AppendFloat(dst, st.Value, 'g', -1, 64)
	return append(dst, '\n')
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

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func promEscapeHelp(s string) string  { return helpEscaper.Replace(s) }
func promEscapeValue(s string) string { return valueEscaper.Replace(s) }

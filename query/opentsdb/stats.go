package opentsdb

import (
	"slices"
	"strconv"
	"time"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/query/read"
)

// SubStats are one sub-query's measurements, kept only for showStats or
// showSummary. Times are nanoseconds.
type SubStats struct {
	// Resolve is the name-to-UID and series selection time
	// (stringToUidTime).
	Resolve int64
	// Read is the store and head read time (queryScanTime).
	Read int64
	// Group is the time to split the series into groups (groupByTime).
	Group int64
	// Points counts the points read, after tag filtering (dpsPostFilter).
	Points int64
	// Table is the table that served the read: the data table, the
	// rollup table of the interval chosen, or a pre-aggregation table
	// (tsd's own "table" field).
	Table string
}

// groupStats are one group's measurements.
type groupStats struct {
	aggregate int64 // aggregationTime, ns
	serialize int64 // serializationTime, ns, set by AppendJSON
}

// queryStats holds a Result's measurements (nil without showStats or
// showSummary, so the plain path takes no clock readings).
type queryStats struct {
	began  time.Time
	subs   []SubStats
	groups []groupStats // parallel to Result.Groups
}

// startStats begins measuring when q asks for statistics.
func (r *Result) startStats() {
	r.stats = nil
	if r.q == nil || !(r.q.ShowStats || r.q.ShowSummary) {
		return
	}
	r.stats = &queryStats{began: time.Now(), subs: make([]SubStats, len(r.q.Queries))}
}

// Stats returns sub-query i's measurements; ok is false without
// showStats or showSummary.
func (r *Result) Stats(i int) (s SubStats, ok bool) {
	if r.stats == nil || i < 0 || i >= len(r.stats.subs) {
		return s, false
	}
	return r.stats.subs[i], true
}

// stage is a running measurement of one sub-query's steps; the zero value
// (no statistics asked) does nothing.
type stage struct {
	st     *SubStats
	res    *Result
	budget *read.Budget
	points int64 // the budget's points at the start
	t      time.Time
}

// stageOf starts measuring sub-query i of res, whose reads count their
// points in budget.
func stageOf(res *Result, i int, budget *read.Budget) stage {
	if res.stats == nil || i < 0 || i >= len(res.stats.subs) {
		return stage{}
	}
	_, pts := budget.Spent()
	return stage{st: &res.stats.subs[i], res: res, budget: budget, points: pts, t: time.Now()}
}

// lap adds the time since the last lap to *field (a field of s.st,
// chosen by pick).
func (s *stage) lap(pick func(*SubStats) *int64) {
	if s.st == nil {
		return
	}
	now := time.Now()
	*pick(s.st) += now.Sub(s.t).Nanoseconds()
	s.t = now
}

// restart starts the next lap now, leaving out the time since the last.
func (s *stage) restart() {
	if s.st != nil {
		s.t = time.Now()
	}
}

// table records the table serving the sub-query.
func (s *stage) table(name string) {
	if s.st != nil {
		s.st.Table = name
	}
}

func resolveTime(s *SubStats) *int64 { return &s.Resolve }
func readTime(s *SubStats) *int64    { return &s.Read }
func groupTime(s *SubStats) *int64   { return &s.Group }

// readDone records the read's time and the points it counted in the
// budget (fused reads downsample without keeping them).
func (s *stage) readDone() {
	if s.st == nil {
		return
	}
	s.lap(readTime)
	_, pts := s.budget.Spent()
	s.st.Points += pts - s.points
}

// groupDone records the aggregation time of the groups added since the
// last lap (one group per call in practice).
func (s *stage) groupDone() {
	if s.st == nil {
		return
	}
	now := time.Now()
	gs := &s.res.stats.groups
	for len(*gs) < len(s.res.Groups) {
		*gs = append(*gs, groupStats{aggregate: now.Sub(s.t).Nanoseconds()})
	}
	s.t = now
}

// appendGroupStats records group g's serialization time since began and,
// with showStats, appends ,"stats":{...} for it, as OpenTSDB 2.4's
// per-result statistics (QueryStats.getQueryStats): its sub-query's
// measurements and the group's own, keys sorted, times in milliseconds.
func (r *Result) appendGroupStats(dst []byte, g int, began time.Time) []byte {
	st := r.stats
	if st == nil || g >= len(st.groups) {
		return dst
	}
	st.groups[g].serialize = time.Since(began).Nanoseconds()
	if !r.q.ShowStats {
		return dst
	}
	sub := r.Groups[g].Sub.Index
	dst = append(dst, `,"stats":`...)
	return appendStatsObject(dst, r.subStatFields(sub, g, false))
}

// appendSummary appends the trailing {"statsSummary":{...}} element
// (QueryStats.getStats(true, true)): counters summed and the average and
// maximum of the aggregated times over the sub-queries, the time so far
// (processingPreWriteTime), and each sub-query's measurements under
// queryIdx_NN with an empty scannerStats (tsd has no per-scanner figures).
func (r *Result) appendSummary(dst []byte) []byte {
	st := r.stats
	var fields []statField
	var points, emitted int64
	var times [3]timeAgg // aggregation, query scan, serialization
	for i := range st.subs {
		points += st.subs[i].Points
		times[1].add(st.subs[i].Read)
	}
	for g := range st.groups {
		emitted += int64(len(r.Groups[g].Points))
		times[0].add(st.groups[g].aggregate)
		times[2].add(st.groups[g].serialize)
	}
	for i, name := range [3]string{"AggregationTime", "QueryScanTime", "SerializationTime"} {
		fields = append(fields, msField("avg"+name, times[i].avg()), msField("max"+name, times[i].max))
	}
	fields = append(fields, intField("dpsPostFilter", points), intField("emittedDPs", emitted),
		msField("processingPreWriteTime", time.Since(st.began).Nanoseconds()))
	for i := range st.subs {
		last := -1
		for g := range st.groups {
			if r.Groups[g].Sub.Index == i {
				last = g
			}
		}
		var sub []byte
		sub = appendStatsObject(sub, r.subStatFields(i, last, true))
		fields = append(fields, statField{name: "queryIdx_" + twoDigits(i), raw: sub})
	}
	dst = append(dst, `{"statsSummary":`...)
	return append(appendStatsObject(dst, fields), '}')
}

// subStatFields lists sub-query i's measurements and those of group g
// (none when g < 0), as OpenTSDB keeps one map per sub-query that each
// of its results overwrites.
func (r *Result) subStatFields(i, g int, scanners bool) []statField {
	s := r.stats.subs[i]
	fields := []statField{
		intField("dpsPostFilter", s.Points), msField("groupByTime", s.Group), intField("queryIndex", int64(i)),
		msField("queryScanTime", s.Read), msField("stringToUidTime", s.Resolve),
		statField{name: "table", raw: jsonw.Jackson.AppendString(nil, s.Table)},
	}
	if g >= 0 {
		gs := r.stats.groups[g]
		fields = append(fields, msField("aggregationTime", gs.aggregate), intField("emittedDPs", int64(len(r.Groups[g].Points))),
			msField("serializationTime", gs.serialize))
	}
	if scanners {
		fields = append(fields, statField{name: "scannerStats", raw: []byte("{}")})
	}
	return fields
}

// statField is one key of a statistics object: an integer, a time in
// nanoseconds written as milliseconds, or raw JSON.
type statField struct {
	name string
	n    int64
	ms   bool
	raw  []byte
}

func intField(name string, n int64) statField { return statField{name: name, n: n} }
func msField(name string, ns int64) statField { return statField{name: name, n: ns, ms: true} }

// appendStatsObject appends the fields as a JSON object sorted by key, as
// OpenTSDB's TreeMap orders them.
func appendStatsObject(dst []byte, fields []statField) []byte {
	slices.SortFunc(fields, func(a, b statField) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	dst = append(dst, '{')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.Jackson.AppendKey(dst, f.name)
		switch {
		case f.raw != nil:
			dst = append(dst, f.raw...)
		case f.ms:
			// DateTime.msFromNano: a double of milliseconds.
			dst = jsonw.AppendJavaDouble(dst, float64(f.n)/1e6)
		default:
			dst = strconv.AppendInt(dst, f.n, 10)
		}
	}
	return append(dst, '}')
}

// timeAgg is the sum, count and maximum of some times.
type timeAgg struct{ sum, n, max int64 }

func (a *timeAgg) add(ns int64) {
	a.sum += ns
	a.n++
	a.max = max(a.max, ns)
}

func (a *timeAgg) avg() int64 {
	if a.n == 0 {
		return 0
	}
	return a.sum / a.n
}

// twoDigits formats i as %02d.
func twoDigits(i int) string {
	if i < 10 {
		return "0" + strconv.Itoa(i)
	}
	return strconv.Itoa(i)
}

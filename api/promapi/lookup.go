package promapi

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// lookup holds the parameters the series, labels and label values
// endpoints share.
type lookup struct {
	limit      int
	start, end time.Time
	sets       [][]*labels.Matcher
}

// parseLookup parses limit, start, end and match[] (each set must select
// something); matchParam names match[] in errors as Prometheus does for
// /series, or not at all (labels).
func parseLookup(f form, matchParam bool) (lookup, *apiError) {
	var l lookup
	var err error
	if l.limit, err = parseLimit(f.get("limit")); err != nil {
		return l, invalidParam("limit", err)
	}
	if l.start, err = parseTimeParam(f.get("start"), "start", MinTime); err != nil {
		return l, invalidParam("start", err)
	}
	if l.end, err = parseTimeParam(f.get("end"), "end", MaxTime); err != nil {
		return l, invalidParam("end", err)
	}
	if l.sets, err = parseMatchers(f.all("match[]")); err != nil {
		if matchParam {
			return l, invalidParam("match[]", err)
		}
		return l, badData(err)
	}
	return l, nil
}

// hintLimit asks the Queryable for one more than limit, so truncation can
// be told apart from an exact fit; 0 is no limit.
func hintLimit(limit int) int {
	if limit > 0 && limit < math.MaxInt {
		return limit + 1
	}
	return limit
}

// querier opens a Querier over l's time range.
func (a *API) querier(l lookup) (storage.Querier, *apiError) {
	q, err := a.q.Querier(msTime(l.start), msTime(l.end))
	if err != nil {
		return nil, execError(err)
	}
	return q, nil
}

// Series serves /api/v1/series: the label sets of the series match[]
// selects in [start, end].
func (a *API) Series(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	f := form{ctx}
	if len(f.all("match[]")) == 0 {
		writeError(ctx, badData(errNoMatch))
		return
	}
	l, aerr := parseLookup(f, true)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	if !a.admit(ctx) {
		return
	}
	q, aerr := a.querier(l)
	if aerr != nil {
		a.release()
		writeError(ctx, aerr)
		return
	}
	sets, warns, err := a.selectSeries(a.opts.Context, q, l)
	if err != nil {
		a.release()
		q.Close()
		writeError(ctx, execError(err))
		return
	}
	if l.limit > 0 && len(sets) > l.limit {
		sets = sets[:l.limit]
		warns.Add(errTruncated)
	}
	warnings, infos := noticeStrings(warns, "")
	list := successList(warnings, infos, len(sets), func(b []byte, i int) []byte { return appendLabels(b, sets[i]) })
	list.OnClose = func() { q.Close() } // the label sets may be the querier's
	a.respondSource(ctx, list)
}

// selectSeries returns the distinct label sets of l's selection, sorted
// (Prometheus sorts only several match[] sets; one order everywhere keeps
// limit's cut stable across Queryables).
func (a *API) selectSeries(ctx context.Context, q storage.Querier, l lookup) ([]labels.Labels, annotations.Annotations, error) {
	hints := &storage.SelectHints{
		Start: msTime(l.start), End: msTime(l.end),
		Func:  "series", // a look-up that needs no samples
		Limit: hintLimit(l.limit),
	}
	all := make([]storage.SeriesSet, 0, len(l.sets))
	for _, ms := range l.sets {
		all = append(all, q.Select(ctx, true, hints, ms...))
	}
	set := all[0]
	if len(all) > 1 {
		set = storage.NewMergeSeriesSet(all, 0, storage.ChainedSeriesMerge)
	}
	var out []labels.Labels
	for set.Next() {
		out = append(out, set.At().Labels())
	}
	return out, set.Warnings(), set.Err()
}

// Labels serves /api/v1/labels: the label names of the series match[]
// selects, or of all series.
func (a *API) Labels(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	l, aerr := parseLookup(form{ctx}, false)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	if !a.admit(ctx) {
		return
	}
	q, aerr := a.querier(l)
	if aerr != nil {
		a.release()
		writeError(ctx, aerr)
		return
	}
	hints := &storage.LabelHints{Limit: hintLimit(l.limit)}
	names, warns, err := union(l.sets, func(ms []*labels.Matcher) ([]string, annotations.Annotations, error) {
		return q.LabelNames(a.opts.Context, hints, ms...)
	})
	if err != nil {
		a.release()
		q.Close()
		// Prometheus's labelNames classifies the error only when it
		// merged several match[] sets; one set's failure is execution.
		if len(l.sets) > 1 {
			writeError(ctx, execError(err))
		} else {
			writeError(ctx, &apiError{errorExec, err})
		}
		return
	}
	a.respondStrings(ctx, q, names, l.limit, warns)
}

// LabelValues serves /api/v1/label/<name>/values; name is taken from the
// path, "U__"-escaped names unescaped as Prometheus does.
func (a *API) LabelValues(ctx *fasthttp.RequestCtx) {
	if !allowed(ctx) {
		return
	}
	name := labelName(ctx.Path())
	if !model.UTF8Validation.IsValidLabelName(name) {
		writeError(ctx, badData(fmt.Errorf("invalid label name: %q", name)))
		return
	}
	l, aerr := parseLookup(form{ctx}, false)
	if aerr != nil {
		writeError(ctx, aerr)
		return
	}
	if !a.admit(ctx) {
		return
	}
	// Prometheus's labelValues answers every storage failure, the
	// querier's included, as execution.
	q, err := a.q.Querier(msTime(l.start), msTime(l.end))
	if err != nil {
		a.release()
		writeError(ctx, &apiError{errorExec, err})
		return
	}
	hints := &storage.LabelHints{Limit: hintLimit(l.limit)}
	vals, warns, err := union(l.sets, func(ms []*labels.Matcher) ([]string, annotations.Annotations, error) {
		return q.LabelValues(a.opts.Context, name, hints, ms...)
	})
	if err != nil {
		a.release()
		q.Close()
		writeError(ctx, &apiError{errorExec, err})
		return
	}
	a.respondStrings(ctx, q, vals, l.limit, warns)
}

// labelName cuts <name> out of .../label/<name>/values.
func labelName(path []byte) string {
	i := bytes.LastIndex(path, []byte("/label/"))
	if i < 0 {
		return ""
	}
	name, _ := bytes.CutSuffix(path[i+len("/label/"):], []byte("/values"))
	s := string(name)
	if len(s) > 3 && s[:3] == "U__" {
		s = model.UnescapeName(s, model.ValueEncodingEscaping)
	}
	return s
}

// union runs get once per matcher set (once with none when there are no
// sets) and returns the sorted union of the strings.
func union(sets [][]*labels.Matcher, get func([]*labels.Matcher) ([]string, annotations.Annotations, error)) ([]string, annotations.Annotations, error) {
	if len(sets) <= 1 {
		var ms []*labels.Matcher
		if len(sets) == 1 {
			ms = sets[0]
		}
		out, warns, err := get(ms)
		out = slices.Clone(out) // the Querier may own the slice until Close
		slices.Sort(out)
		return out, warns, err
	}
	var warns annotations.Annotations
	seen := make(map[string]struct{})
	for _, ms := range sets {
		vals, w, err := get(ms)
		warns.Merge(w)
		if err != nil {
			return nil, warns, err
		}
		for _, v := range vals {
			seen[v] = struct{}{}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out, warns, nil
}

// respondStrings answers a names or values look-up, truncated to limit,
// under the slot admit took, and closes q once it is written.
func (a *API) respondStrings(ctx *fasthttp.RequestCtx, q storage.Querier, ss []string, limit int, warns annotations.Annotations) {
	if limit > 0 && len(ss) > limit {
		ss = ss[:limit]
		warns.Add(errTruncated)
	}
	warnings, infos := noticeStrings(warns, "")
	list := successList(warnings, infos, len(ss), func(b []byte, i int) []byte { return jsonw.HTML.AppendString(b, ss[i]) })
	list.OnClose = func() { q.Close() }
	a.respondSource(ctx, list)
}

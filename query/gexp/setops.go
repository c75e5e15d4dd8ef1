package gexp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/query/tsquery"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// IDs gives the UID of a name. The set functions need UIDs because
// OpenTSDB orders their answers by tag UIDs and names each answer after
// the smallest metric UID among its members.
type IDs interface {
	ID(kind uid.Kind, name string) (id uint64, ok bool, err error)
}

// env is what an evaluation needs besides the sub-query results.
type env struct {
	ids IDs
	// sub0 is the request's first sub-query: an answer of a set function
	// reports query index 0 (EDPtoDPS.getQueryIndex), which the JSON
	// writer reads for showQuery and the null fill.
	sub0 *tsquery.SubQuery
}

// setOp is one of the four arithmetic set functions (SumSeries,
// DiffSeries, MultiplySeries, DivideSeries): each builds the JEXL
// expression "a op b op ..." over its parameters joined by UNION.
type setOp byte

const (
	opNone setOp = iota
	opSum
	opDiff
	opMul
	opDiv
)

// setOps are the names ExpressionFactory registers for them.
var setOps = map[string]setOp{
	"sumSeries": opSum, "sum": opSum,
	"diffSeries": opDiff, "difference": opDiff,
	"multiplySeries": opMul, "multiply": opMul,
	"divideSeries": opDiv, "divide": opDiv,
}

// apply is JEXL's double arithmetic as OpenTSDB's ExpressionIterator runs
// it: a division by zero is an ArithmeticException that the lenient
// interpreter answers with 0.
func (op setOp) apply(l, r float64) float64 {
	switch op {
	case opSum:
		return l + r
	case opDiff:
		return l - r
	case opMul:
		return l * r
	}
	if r == 0 {
		return 0
	}
	return l / r
}

// slot is one answer of a set function: the series of each parameter
// whose tags flatten to key, by parameter (-1 where a parameter has none).
type slot struct {
	key []byte
	at  []int
}

// combine is SumSeries.evaluate and its three siblings: 2 to 26 series
// parameters, bound to the variables a, b, c... of an ExpressionIterator
// with a UNION join that does not use the query's tag keys nor the
// aggregated tags:
//
//   - Series pair by their tags, flattened as tag key and value UIDs in
//     tag key UID order (UnionIterator.computeUnion); the answers come in
//     the byte order of that key, a series without tags first. A parameter
//     with two series of the same tags keeps its last.
//   - Points pair by position, not by time (EDPtoDPS walks
//     ExpressionIterator.next(index)): the k-th answer point combines the
//     k-th point of every member at the smallest of their timestamps. A
//     parameter with no series of those tags counts 0; a NaN counts 0 (the
//     ZERO fill of TimeSyncedIterator). Members with different point
//     counts fail with "No more elements" once the shorter runs out
//     (TimeSyncedIterator.next(int)).
//   - Every answer point is a double; a division by zero gives 0.
//   - The answer has the tags of the first parameter's member (none when
//     the first parameter has no series of those tags), the metric of the
//     member with the smallest metric UID, the union of the members'
//     aggregated tags in tag key UID order, and no TSUIDs.
func combine(ev *env, op setOp, in [][]opentsdb.Group) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	if len(in) < 2 || len(in) > 26 {
		return nil, bad(fmt.Sprintf("Must have 2 to 26 series, got %d instead", len(in)))
	}
	slots, err := unionSlots(ev.ids, in)
	if err != nil {
		return nil, err
	}
	out := make([]opentsdb.Group, 0, len(slots))
	for _, s := range slots {
		g, err := combineSlot(ev, op, in, s)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// unionSlots pairs the parameters' series by flattened tag UIDs, in key
// order.
func unionSlots(ids IDs, in [][]opentsdb.Group) ([]*slot, error) {
	byKey := map[string]*slot{}
	var slots []*slot
	for v, gs := range in {
		for j := range gs {
			if len(gs[j].Points) == 0 {
				// OpenTSDB's TimeSyncedIterator has no emitter for a series
				// without points; tsd leaves it out.
				continue
			}
			key, err := flattenTags(ids, gs[j].Tags)
			if err != nil {
				return nil, err
			}
			s := byKey[string(key)]
			if s == nil {
				s = &slot{key: key, at: make([]int, len(in))}
				for i := range s.at {
					s.at[i] = -1
				}
				byKey[string(key)] = s
				slots = append(slots, s)
			}
			s.at[v] = j
		}
	}
	sort.Slice(slots, func(i, j int) bool { return bytes.Compare(slots[i].key, slots[j].key) < 0 })
	return slots, nil
}

// flattenTags is UnionIterator.flattenTags without query tags or
// aggregated tags: tag key and value UIDs in tag key UID order. Every UID
// is written in 8 bytes: the order is that of OpenTSDB's fixed-width UIDs.
func flattenTags(ids IDs, tags []opentsdb.Tag) ([]byte, error) {
	type pair struct{ k, v uint64 }
	pairs := make([]pair, 0, len(tags))
	for _, t := range tags {
		k, err := mustID(ids, uid.TagK, t.Key)
		if err != nil {
			return nil, err
		}
		v, err := mustID(ids, uid.TagV, t.Value)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, pair{k, v})
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return 0
	})
	key := make([]byte, 0, 16*len(pairs))
	for _, p := range pairs {
		key = binary.BigEndian.AppendUint64(key, p.k)
		key = binary.BigEndian.AppendUint64(key, p.v)
	}
	return key, nil
}

func mustID(ids IDs, kind uid.Kind, name string) (uint64, error) {
	id, ok, err := ids.ID(kind, name)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, &tsquery.Error{Msg: fmt.Sprintf("No such name for '%s': '%s'", kind, name)}
	}
	return id, nil
}

// combineSlot computes one answer of combine.
func combineSlot(ev *env, op setOp, in [][]opentsdb.Group, s *slot) (opentsdb.Group, error) {
	var members []*opentsdb.Group
	n := -1
	for v, j := range s.at {
		if j < 0 {
			continue
		}
		g := &in[v][j]
		members = append(members, g)
		if n >= 0 && len(g.Points) != n {
			return opentsdb.Group{}, bad("No more elements")
		}
		n = len(g.Points)
	}
	out := opentsdb.Group{Sub: ev.sub0, TSUIDs: []string{}}
	if ev.sub0 == nil {
		out.Sub = members[0].Sub
	}
	if j := s.at[0]; j >= 0 {
		out.Tags = slices.Clone(in[0][j].Tags)
	}
	metric, err := smallestMetric(ev.ids, members)
	if err != nil {
		return opentsdb.Group{}, err
	}
	out.Metric = metric
	if out.AggregateTags, err = unionAggTags(ev.ids, members); err != nil {
		return opentsdb.Group{}, err
	}
	out.Points = make([]series.Point, n)
	vals := make([]float64, len(s.at))
	for k := range n {
		t := int64(math.MaxInt64)
		for v, j := range s.at {
			vals[v] = 0
			if j < 0 {
				continue
			}
			p := in[v][j].Points[k]
			t = min(t, p.T)
			if x := p.Float(); !math.IsNaN(x) {
				vals[v] = x
			}
		}
		r := vals[0]
		for _, x := range vals[1:] {
			r = op.apply(r, x)
		}
		out.Points[k] = series.Float64Point(t, r)
	}
	return out, nil
}

// smallestMetric is EDPtoDPS.metricName: the name of the smallest metric
// UID among the members. A member renamed by alias has an empty metric
// UID (PostAggregatedDataPoints.metricUID), which sorts first and which
// OpenTSDB then fails to resolve.
func smallestMetric(ids IDs, members []*opentsdb.Group) (string, error) {
	best, name := uint64(math.MaxUint64), ""
	for _, g := range members {
		id, ok, err := ids.ID(uid.Metric, g.Metric)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", bad("Wrong id.length = 0 which is != 3 required for 'metrics'")
		}
		if name == "" || id < best {
			best, name = id, g.Metric
		}
	}
	return name, nil
}

// unionAggTags merges the members' aggregated tag keys in tag key UID
// order (ExpressionDataPoint.add into a ByteSet).
func unionAggTags(ids IDs, members []*opentsdb.Group) ([]string, error) {
	type tagk struct {
		id   uint64
		name string
	}
	var all []tagk
	seen := map[string]bool{}
	for _, g := range members {
		for _, k := range g.AggregateTags {
			if seen[k] {
				continue
			}
			seen[k] = true
			id, err := mustID(ids, uid.TagK, k)
			if err != nil {
				return nil, err
			}
			all = append(all, tagk{id, k})
		}
	}
	slices.SortFunc(all, func(a, b tagk) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	names := make([]string, len(all))
	for i, k := range all {
		names[i] = k.name
	}
	return names, nil
}

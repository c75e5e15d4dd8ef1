package gexp

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/series"
)

var factorRE = regexp.MustCompile(`^[-0-9.]+$`)

// scale is Scale.evaluate: no series answers none before the factor is
// checked; an integer point times an integral factor stays an integer,
// (long)factor * value wrapping as Java's long does.
func scale(in [][]opentsdb.Group, args []string) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	if len(args) == 0 {
		return nil, bad("Missing scaling factor")
	}
	if !factorRE.MatchString(args[0]) {
		return nil, bad("Unparseable scale factor value: 0.0")
	}
	f, err := strconv.ParseFloat(args[0], 64)
	if err != nil {
		return nil, bad("Invalid parameter, must be an integer or floating point")
	}
	isInt := f == math.Floor(f) // the regexp leaves no infinities
	lf := javaLong(f)
	return each(in, func(g opentsdb.Group) opentsdb.Group {
		return mapPoints(g, func(p series.Point) series.Point {
			if p.IsInt() && isInt {
				return series.IntPoint(p.T, lf*p.Int())
			}
			return series.Float64Point(p.T, f*p.Float())
		})
	}), nil
}

// absolute is Absolute.evaluate.
func absolute(in [][]opentsdb.Group, _ []string) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	return each(in, func(g opentsdb.Group) opentsdb.Group { return mapPoints(g, abs) }), nil
}

// alias is Alias.evaluate with PostAggregatedDataPoints' naming: the
// arguments joined by "," name the series, "@tagk" replaced by the
// series' tag values when it has tags; tags and aggregated tags are
// dropped, and the points become their absolute values.
func alias(in [][]opentsdb.Group, args []string) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	if len(args) == 0 {
		return nil, bad("Missing the alias")
	}
	tmpl := strings.Join(args, ",")
	return each(in, func(g opentsdb.Group) opentsdb.Group {
		name := tmpl
		if strings.Contains(name, "@") {
			for _, t := range g.Tags {
				name = strings.ReplaceAll(name, "@"+t.Key, t.Value)
			}
		}
		g = mapPoints(g, abs)
		g.Metric, g.Tags, g.AggregateTags = name, nil, nil
		return g
	}), nil
}

// timeShift is TimeShift.evaluate. Its parseParam reads the unit up to
// the end of the quoted argument, closing quote included, so no unit
// matches: every argument that gets that far fails with
// "unknown time unit=<unit>'", as OpenTSDB 2.4.1 answers.
func timeShift(in [][]opentsdb.Group, args []string) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	if len(args) == 0 {
		return nil, bad("Need amount of timeshift to perform timeshift")
	}
	a := strings.TrimSpace(args[0]) // a NAME has no blanks; kept for the record
	if !strings.HasPrefix(a, "'") || !strings.HasSuffix(a, "'") {
		return nil, bad("Invalid timeshift parameter: eg '10min'")
	}
	digits := 0
	for i := 1; i < len(a) && a[i] >= '0' && a[i] <= '9'; i++ {
		digits++
	}
	if digits == 0 {
		return nil, bad("Invalid Parameter: " + a)
	}
	if _, err := strconv.ParseInt(a[1:digits+1], 10, 32); err != nil {
		return nil, bad(`For input string: "` + a[1:digits+1] + `"`)
	}
	return nil, bad("unknown time unit=" + strings.TrimSpace(a[digits+1:]))
}

// javaLong is Java's (long) cast of a double: saturating, NaN to 0.
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

package gexp

import (
	"math"
	"strconv"

	"github.com/tsd-db/tsd/query/opentsdb"
	"github.com/tsd-db/tsd/series"
)

// movingAverage is MovingAverage.evaluate: every point becomes a double
// and each series runs alone through AggregationIterator into
// MovingAverageAggregator, so each output point is the aggregator's
// answer at that point's time.
func movingAverage(in [][]opentsdb.Group, args []string) ([]opentsdb.Group, error) {
	if len(in) == 0 {
		return []opentsdb.Group{}, nil
	}
	window, isTime, err := movingWindow(args)
	if err != nil {
		return nil, err
	}
	return each(in, func(g opentsdb.Group) opentsdb.Group {
		m := &mover{window: window, isTime: isTime}
		return mapPoints(g, func(p series.Point) series.Point {
			return series.Float64Point(p.T, m.next(p.T, p.Float()))
		})
	}), nil
}

// movingWindow reads the window: a count of points, or a quoted time
// ('5min') in milliseconds.
func movingWindow(args []string) (int64, bool, error) {
	if len(args) == 0 || args[0] == "" {
		return 0, false, bad("Missing moving average window size")
	}
	a := args[0]
	var w int64
	isTime := false
	switch {
	case topnRE.MatchString(a):
		n, err := strconv.ParseInt(a, 10, 32)
		if err != nil {
			return 0, false, bad("Invalid parameter, must be an integer")
		}
		w = n
	case len(a) > 0 && a[0] == '\'' && a[len(a)-1] == '\'':
		n, err := movingTime(a)
		if err != nil {
			return 0, false, err
		}
		w, isTime = n, true
	default:
		return 0, false, bad("Unparseable window size: " + a)
	}
	if w <= 0 {
		return 0, false, bad("Moving average window must be an integer greater than zero")
	}
	return w, isTime, nil
}

// movingTime is MovingAverage.parseParam: digits after the opening quote,
// then a unit before the closing one.
func movingTime(a string) (int64, error) {
	idx := 0
	for c := 1; c < len(a) && a[c] >= '0' && a[c] <= '9'; c++ {
		idx++
	}
	if idx < 1 {
		return 0, bad("Invalid moving window parameter: " + a)
	}
	n, err := strconv.ParseInt(a[1:idx+1], 10, 32)
	if err != nil {
		return 0, bad("Unable to parse moving window parameter: " + a)
	}
	unit := ""
	if idx+1 <= len(a)-1 {
		unit = a[idx+1 : len(a)-1]
	}
	switch unit {
	case "day", "d":
		return n * 86_400_000, nil
	case "hr", "hour", "h":
		return n * 3_600_000, nil
	case "min", "m":
		return n * 60_000, nil
	case "sec", "s":
		return n * 1000, nil
	}
	return 0, bad("Unknown time unit=" + unit + " in window=" + a)
}

// mover is MovingAverageAggregator's double path. OpenTSDB keeps a list
// newest first and walks it from the front; acc holds the same points
// oldest first and is walked from the back.
type mover struct {
	window  int64
	isTime  bool
	started bool
	acc     []movePoint
}

type movePoint struct {
	t int64
	v float64
}

func (m *mover) next(t int64, v float64) float64 {
	m.acc = append(m.acc, movePoint{t, v})
	if m.isTime && !m.started {
		m.started = true
		return 0
	}
	sum, count, met := 0.0, 0, false
	var cum, last int64 = 0, -1
	i := len(m.acc) - 1
	for ; i >= 0; i-- {
		dp := m.acc[i]
		if m.isTime {
			if last < 0 {
				last = dp.t
			} else {
				cum += last - dp.t
				last = dp.t
				if cum >= m.window {
					met = true
					break
				}
			}
		}
		if !math.IsNaN(dp.v) {
			sum += dp.v
			count++
		}
		if !m.isTime && int64(count) >= m.window {
			met = true
			break
		}
	}
	if i > 0 {
		// The iterator removes what follows its position: the older points.
		m.acc = append(m.acc[:0], m.acc[i:]...)
	}
	if !met || count == 0 {
		return 0
	}
	return sum / float64(count)
}

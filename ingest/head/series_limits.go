package head

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// The configuration keys of SeriesLimits, which refusals name so that an
// operator knows what to raise.
const (
	LimitHourlySeries    = "tsd.core.max_hourly_series"
	LimitDailySeries     = "tsd.core.max_daily_series"
	LimitSeriesPerMetric = "tsd.core.max_series_per_metric"
)

// SeriesLimits bound the series clients may write. Past a limit, a point
// of a series new to it is refused with a *SeriesLimitError (bad data for
// the protocols: 400, never a retryable 5xx) while points of series it
// already counts go on landing. The limits apply to points appended by
// name (NameAppender, every protocol's path), not to Appender, whose
// callers resolved their series already. The zero value is every limit
// off.
type SeriesLimits struct {
	// MaxHourly bounds the distinct series written in the last hour
	// (tsd.core.max_hourly_series), sliding in quarter-hour steps: a
	// series counts for 60 to 75 minutes after its last point (see
	// seriesWindow). Exact; costs about 20 bytes of memory per series
	// counted, at most MaxHourly of them. 0 is off. Default 0.
	MaxHourly int
	// MaxDaily is MaxHourly over the last day (tsd.core.max_daily_series),
	// sliding in 6-hour steps: a series counts for 24 to 30 hours after
	// its last point. 0 is off. Default 0.
	MaxDaily int
	// MaxPerMetric bounds the series of one metric
	// (tsd.core.max_series_per_metric): a point of a series the series
	// index does not know is refused once its metric has that many in
	// the index, counting the new series other writers are committing.
	// It needs a Registrar that is a SeriesCounter. 0 is off. Default 0.
	MaxPerMetric int
}

func (l SeriesLimits) on() bool { return l.MaxHourly > 0 || l.MaxDaily > 0 || l.MaxPerMetric > 0 }

func (l SeriesLimits) validate(r SeriesRegistrar) error {
	if l.MaxHourly < 0 || l.MaxDaily < 0 || l.MaxPerMetric < 0 {
		return fmt.Errorf("ingest: negative series limit %+v", l)
	}
	if _, ok := r.(SeriesCounter); l.MaxPerMetric > 0 && !ok {
		return errors.New("ingest: " + LimitSeriesPerMetric + " needs a series index that counts series")
	}
	return nil
}

// SeriesCounter is implemented by a registrar that knows every registered
// series (uid/index's Index): the per-metric series limit asks it whether
// a series is new and how many series a metric has. tsuid is a series key
// (tags sorted by tag key UID); neither call may block on I/O.
type SeriesCounter interface {
	Lookup(tsuid []byte) (index.SeriesID, bool)
	MetricSeries(metric uid.ID) int
}

// ErrSeriesLimit marks a point refused because its series is new to a
// full series limit (*SeriesLimitError): a property of the data, so the
// client must not retry it.
var ErrSeriesLimit = errors.New("ingest: series limit reached")

// SeriesLimitError is a point refused by a series limit.
type SeriesLimitError struct {
	// Limit is the limit's configuration key (LimitHourlySeries, ...) and
	// Max its value.
	Limit string
	Max   int
	// Metric is the metric of the refused series, for the per-metric
	// limit.
	Metric string
}

// Error names the limit, as the protocols answer it.
func (e *SeriesLimitError) Error() string {
	switch e.Limit {
	case LimitSeriesPerMetric:
		return fmt.Sprintf("new series refused: metric %q has %d series, the most %s allows", e.Metric, e.Max, e.Limit)
	case LimitDailySeries:
		return fmt.Sprintf("new series refused: %d series were written in the last day, the most %s allows", e.Max, e.Limit)
	}
	return fmt.Sprintf("new series refused: %d series were written in the last hour, the most %s allows", e.Max, e.Limit)
}

// Is makes errors.Is(err, ErrSeriesLimit) hold.
func (e *SeriesLimitError) Is(target error) bool { return target == ErrSeriesLimit }

// SeriesLimitStats count what the series limits did.
type SeriesLimitStats struct {
	// RefusedHourly, RefusedDaily and RefusedPerMetric count the points
	// each limit refused.
	RefusedHourly, RefusedDaily, RefusedPerMetric int64
	// Hourly and Daily are the distinct series in each window now (0 when
	// the limit is off).
	Hourly, Daily int64
}

// seriesCheck is what the limiter needs to know of a point's series.
type seriesCheck struct {
	hash uint64 // of the series' names (NameAppender.seriesHash)
	// isNew says the series index does not know the series, so it counts
	// against its metric; metric is then its name and id its UID (0 while
	// the name has none, and so no series).
	isNew  bool
	metric []byte
	id     uid.ID
}

// seriesLimiter enforces SeriesLimits for every NameAppender of a head.
// A point costs one atomic load when its series was admitted in the
// current epoch (NameAppender caches it); the epoch moves whenever a
// window's slot changes, so every series is checked again once per slot,
// under mu, by a map lookup per window.
type seriesLimiter struct {
	opts    SeriesLimits
	clock   func() time.Time
	counter SeriesCounter // nil unless MaxPerMetric > 0
	seed    maphash.Seed
	epoch   atomic.Uint64
	nextMs  atomic.Int64 // when the next window slot begins

	refused [3]atomic.Int64 // hourly, daily, per metric

	mu struct {
		sync.Mutex
		hourly, daily *seriesWindow // nil when off
		// pending counts, by metric name, the series admitted as new to
		// the index whose commit has not ended: the index does not count
		// them yet.
		pending map[string]int
	}
}

const (
	refusedHourly = iota
	refusedDaily
	refusedPerMetric
)

// newSeriesLimiter returns nil when every limit is off.
func newSeriesLimiter(opts SeriesLimits, r SeriesRegistrar, clock func() time.Time) *seriesLimiter {
	if !opts.on() {
		return nil
	}
	l := &seriesLimiter{opts: opts, clock: clock, seed: maphash.MakeSeed()}
	l.counter, _ = r.(SeriesCounter)
	now := clock().UnixMilli()
	if opts.MaxHourly > 0 {
		l.mu.hourly = newSeriesWindow(opts.MaxHourly, time.Hour.Milliseconds(), now)
	}
	if opts.MaxDaily > 0 {
		l.mu.daily = newSeriesWindow(opts.MaxDaily, 24*time.Hour.Milliseconds(), now)
	}
	l.mu.pending = make(map[string]int)
	l.nextMs.Store(l.nextSlotLocked())
	return l
}

// admit decides whether a point of the series c may be written, records
// it in the windows and, for a series new to the index, as pending for
// its metric (release ends that). It returns the epoch the series is
// admitted in, or a *SeriesLimitError.
func (l *seriesLimiter) admit(c seriesCheck) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(l.clock().UnixMilli())
	if c.isNew && l.opts.MaxPerMetric > 0 {
		if err := l.checkMetricLocked(c); err != nil {
			return 0, err
		}
	}
	h, d := l.mu.hourly, l.mu.daily
	atH, atD := int64(-1), int64(-1)
	if h != nil {
		if atH = h.find(c.hash); !h.admits(atH) {
			return 0, l.refuse(refusedHourly, LimitHourlySeries, h.max, "")
		}
	}
	if d != nil {
		if atD = d.find(c.hash); !d.admits(atD) {
			return 0, l.refuse(refusedDaily, LimitDailySeries, d.max, "")
		}
	}
	if h != nil {
		h.add(c.hash, atH)
	}
	if d != nil {
		d.add(c.hash, atD)
	}
	if c.isNew && l.opts.MaxPerMetric > 0 {
		l.mu.pending[string(c.metric)]++
	}
	return l.epoch.Load(), nil
}

// checkMetricLocked refuses a new series of a metric that has
// MaxPerMetric series, in the index or pending.
func (l *seriesLimiter) checkMetricLocked(c seriesCheck) error {
	n := l.mu.pending[string(c.metric)]
	if c.id != 0 {
		n += l.counter.MetricSeries(c.id)
	}
	if n >= l.opts.MaxPerMetric {
		return l.refuse(refusedPerMetric, LimitSeriesPerMetric, l.opts.MaxPerMetric, string(c.metric))
	}
	return nil
}

func (l *seriesLimiter) refuse(i int, limit string, max int, metric string) error {
	l.refused[i].Add(1)
	return &SeriesLimitError{Limit: limit, Max: max, Metric: metric}
}

// release ends the pending count of new series of the metrics named: their
// commit ended, so the index counts them now (or they failed to register
// and were dropped).
func (l *seriesLimiter) release(metrics []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range metrics {
		if l.mu.pending[m]--; l.mu.pending[m] <= 0 {
			delete(l.mu.pending, m)
		}
	}
}

// tick moves the windows on when a slot has ended: called by every
// commit, so that series admitted in an earlier slot are checked again
// soon even when no point needs the slow path meanwhile. It costs a clock
// read.
func (l *seriesLimiter) tick() {
	if now := l.clock().UnixMilli(); now >= l.nextMs.Load() {
		l.mu.Lock()
		l.advanceLocked(now)
		l.mu.Unlock()
	}
}

// advanceLocked moves the windows to now and bumps the epoch if a slot
// changed.
func (l *seriesLimiter) advanceLocked(now int64) {
	moved := false
	for _, w := range [2]*seriesWindow{l.mu.hourly, l.mu.daily} {
		if w != nil && w.advance(now) {
			moved = true
		}
	}
	if moved {
		l.epoch.Add(1)
		l.nextMs.Store(l.nextSlotLocked())
	}
}

// nextSlotLocked returns when the earliest window's current slot ends
// (never, when only the per-metric limit is on).
func (l *seriesLimiter) nextSlotLocked() int64 {
	next := int64(1<<63 - 1)
	for _, w := range [2]*seriesWindow{l.mu.hourly, l.mu.daily} {
		if w != nil {
			next = min(next, w.nextMs())
		}
	}
	return next
}

func (l *seriesLimiter) stats() SeriesLimitStats {
	s := SeriesLimitStats{RefusedHourly: l.refused[refusedHourly].Load(),
		RefusedDaily: l.refused[refusedDaily].Load(), RefusedPerMetric: l.refused[refusedPerMetric].Load()}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(l.clock().UnixMilli()) // an idle window empties too
	if l.mu.hourly != nil {
		s.Hourly = int64(l.mu.hourly.live)
	}
	if l.mu.daily != nil {
		s.Daily = int64(l.mu.daily.live)
	}
	return s
}

// SeriesLimitStats returns what the series limits refused and the series
// each window counts now; all zero when every limit is off.
func (h *Head) SeriesLimitStats() SeriesLimitStats {
	if h.limiter == nil {
		return SeriesLimitStats{}
	}
	return h.limiter.stats()
}

package head

import (
	"hash/maphash"

	"github.com/tsd-db/tsd/uid"
)

// limitState is a NameAppender's share of the head's series limits.
type limitState struct {
	l      *seriesLimiter // nil when the limits are off
	canon  []byte         // canonical names scratch
	sorted []byte         // series key scratch, tags in tag key UID order
	// newSet holds the hashes of the series admitted as new to the series
	// index since the last commit, and newMetrics their metrics, pending
	// in the limiter until the commit ends (endCommit). A series named
	// twice before its commit is new once.
	newSet     map[uint64]struct{}
	newMetrics []string
}

// admission is the limiter's answer for a series: its hash and the epoch
// it was admitted in (both 0 when the limits are off).
type admission struct{ hash, epoch uint64 }

// admit asks the limiter whether a series that missed the cache may be
// written. tags are sorted by name (resolveKnown), which makes the names
// canonical; key holds their UIDs in that order, the unknown ones 0 when
// !known. It runs before any UID is assigned, so a refused series leaves
// nothing behind.
func (n *NameAppender) admit(metric []byte, tags []uid.Tag, key []byte, known bool) (admission, error) {
	s := &n.lim
	s.canon = appendNameKey(s.canon[:0], metric, tags)
	c := seriesCheck{hash: maphash.Bytes(s.l.seed, s.canon)}
	if s.l.opts.MaxPerMetric > 0 {
		if _, dup := s.newSet[c.hash]; !dup && !(known && n.indexed(key)) {
			c.isNew, c.metric, c.id = true, metric, n.metricID(key)
		}
	}
	epoch, err := s.l.admit(c)
	if err != nil {
		return admission{}, err
	}
	if c.isNew {
		if s.newSet == nil {
			s.newSet = make(map[uint64]struct{})
		}
		s.newSet[c.hash] = struct{}{}
		s.newMetrics = append(s.newMetrics, string(metric))
	}
	return admission{hash: c.hash, epoch: epoch}, nil
}

// readmit checks a cached series again after the limiter's epoch moved.
func (n *NameAppender) readmit(e *nameEntry) error {
	epoch, err := n.lim.l.admit(seriesCheck{hash: e.hash})
	if err != nil {
		return err
	}
	e.epoch = epoch
	return nil
}

// indexed reports whether the series index knows the series of key (all
// its names resolved, tags in name order).
func (n *NameAppender) indexed(key []byte) bool {
	s := &n.lim
	s.sorted = append(s.sorted[:0], key...)
	SortSeriesKey(s.sorted, n.w)
	_, ok := s.l.counter.Lookup(s.sorted)
	return ok
}

// metricID returns the metric UID at the front of key, 0 when the metric
// has none yet.
func (n *NameAppender) metricID(key []byte) uid.ID {
	var id uid.ID
	for _, b := range key[:n.w.Metric] {
		id = id<<8 | uid.ID(b)
	}
	return id
}

// endCommit ends the commit's share of the limits: the new series it
// admitted stop being pending (the index counts those it registered), and
// after a failure the cache forgets every series, so that one the index
// never registered is counted against its metric again on its next point.
func (n *NameAppender) endCommit(ok bool) {
	s := &n.lim
	s.l.tick()
	if len(s.newMetrics) == 0 {
		return
	}
	s.l.release(s.newMetrics)
	clear(s.newMetrics)
	s.newMetrics = s.newMetrics[:0]
	clear(s.newSet)
	if !ok {
		n.DropCache()
	}
}

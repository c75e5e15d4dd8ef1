package head

import (
	"errors"
	"maps"
	"slices"

	"github.com/tsd-db/tsd/ingest/wal"
)

// headReplay rebuilds a head from its log's records. Log ids are scoped
// to their segment: every segment defines the series it references.
type headReplay struct {
	h   *Head
	seg uint32
	ids map[uint64]*memSeries
	sd  wal.SeriesDecoder
	smd wal.SamplesDecoder
	dd  wal.DeleteDecoder
	// defs and defIDs are the series of one series record and their log
	// ids, registered together; keys is register's scratch.
	defs   []*memSeries
	defIDs []uint64
	keys   [][]byte
	now    int64
	stats  ReplayStats
	lost   map[uint32]*segmentLoss // by segment, for the error lines
}

// segmentLoss is what replay dropped from one segment's intact records.
type segmentLoss struct {
	orphans, bad int64
	first        error // the first undecodable record
}

func newHeadReplay(h *Head) *headReplay {
	return &headReplay{h: h, ids: make(map[uint64]*memSeries), now: h.opts.Clock().UnixMilli(),
		lost: make(map[uint32]*segmentLoss)}
}

// loss returns the current segment's loss record.
func (r *headReplay) loss() *segmentLoss {
	l := r.lost[r.seg]
	if l == nil {
		l = &segmentLoss{}
		r.lost[r.seg] = l
	}
	return l
}

// record is the wal.ReplayFunc.
func (r *headReplay) record(seg uint32, t wal.RecordType, payload []byte) error {
	if seg != r.seg {
		clear(r.ids)
		r.seg = seg
	}
	if t == wal.TypeSeries {
		return r.series(payload)
	}
	switch t {
	case wal.TypeSamples:
		r.smd.Reset(payload)
		r.samples(seg)
	case wal.TypeSamplesMs:
		r.smd.ResetMs(payload)
		r.samples(seg)
	case wal.TypeDelete:
		r.replayDelete(payload)
	}
	return nil
}

// series recreates the series of a series record and registers them
// again (in one registrar call), before any of their samples is replayed.
func (r *headReplay) series(payload []byte) error {
	r.sd.Reset(payload)
	r.defs, r.defIDs = r.defs[:0], r.defIDs[:0]
	for {
		id, key, ok := r.sd.Next()
		if !ok {
			break
		}
		s, err := r.h.getOrAdd(key)
		if errors.Is(err, ErrBadSeriesKey) {
			r.bad(err)
			continue
		}
		if err != nil {
			return err
		}
		r.defs, r.defIDs = append(r.defs, s), append(r.defIDs, id)
	}
	if err := r.sd.Err(); err != nil {
		r.bad(err)
	}
	var err error
	if r.keys, err = r.h.register(r.defs, r.keys); err != nil {
		return err
	}
	for i, s := range r.defs {
		r.ids[r.defIDs[i]] = s
	}
	return nil
}

// samples adds the points of a samples record to their series.
func (r *headReplay) samples(seg uint32) {
	var delta int64
	for {
		id, p, ok := r.smd.Next()
		if !ok {
			break
		}
		s := r.ids[id]
		if s == nil || p.T < 0 {
			r.stats.OrphanSamples++
			r.loss().orphans++
			continue
		}
		s.mu.Lock()
		delta += s.append(r.h, p, seg, r.now)
		if i, ok := s.findRow(rowBase(p.T)); ok {
			s.rows[i].maybeStored = true // a crash may have come after its flush
		}
		s.mu.Unlock()
		r.stats.Samples++
	}
	if err := r.smd.Err(); err != nil {
		r.bad(err)
	}
	r.h.mem.Add(delta)
}

func (r *headReplay) bad(err error) {
	r.stats.BadRecords++
	l := r.loss()
	l.bad++
	if l.first == nil {
		l.first = err
	}
}

// finish completes the stats and logs, one line per segment, the points
// replay dropped: samples of series whose series record was damaged (the
// log skipped it) or does not decode. The log itself names each damaged
// place.
func (r *headReplay) finish(ws wal.ReplayStats) ReplayStats {
	r.stats.WAL = ws
	r.stats.Series = r.h.NumSeries()
	segs := slices.Sorted(maps.Keys(r.lost))
	for i, seg := range segs {
		l := r.lost[seg]
		if i == wal.MaxDamageListed {
			r.h.opts.Logger.Error("ingest: points dropped at replay in more segments", "dir", r.h.log.Dir(),
				"segments", len(segs)-i, "total_points", r.stats.OrphanSamples, "total_undecodable_records", r.stats.BadRecords)
			break
		}
		r.h.opts.Logger.Error("ingest: points dropped at replay, their series record was damaged or unreadable",
			"segment", r.h.fs.PathJoin(r.h.log.Dir(), wal.SegmentName(seg)), "points", l.orphans,
			"undecodable_records", l.bad, "first_error", l.first)
	}
	return r.stats
}

package read

import (
	"context"

	"github.com/tsd-db/tsd/rowkey"
)

// maxTrustedHours bounds the hours a bucket scan looks up in the trust
// index one by one: a longer range (a query from the epoch) is scanned
// as before.
const maxTrustedHours = 1024

// metHour is an hour a recording bucket scan met rows in: their entries
// are fetchBucket.metEntries[lo:hi], and whole is false once a row there
// was not selected or had no cache entry.
type metHour struct {
	base   int64 // s
	lo, hi int
	whole  bool
}

// runTrusted scans one bucket hour by hour against the trust index: an
// hour a scan read whole while nothing was written to it since gives
// its rows' cache entries without a store read; the other hours are
// scanned in runs, and each hour such a scan reads whole is recorded
// for the next fetch. A dashboard refreshing settled hours then costs
// neither the scan nor a fingerprint per row.
func (fs *fetchScan) runTrusted(ctx context.Context, rr *rowReader, bucket int, t *trustIndex) error {
	fb := &fs.buckets[bucket]
	metric := fs.sel.Series[0].TSUID[:fs.r.opts.Layout.Widths.Metric]
	last := rowkey.BaseTime(fs.sel.End)
	for h := rowkey.BaseTime(fs.sel.Start); h <= last; {
		if fb.replay(rr, t, bucket, metric, h) {
			h += rowkey.RowSpan
			continue
		}
		end := h + rowkey.RowSpan // the run to scan: up to an hour the index holds
		for end <= last && t.findHour(bucket, metric, end) == nil {
			end += rowkey.RowSpan
		}
		if err := fb.scanHours(ctx, rr, t, bucket, metric, h, end-rowkey.RowSpan); err != nil {
			return err
		}
		h = end
	}
	return nil
}

// replay appends the selected rows of the hour at base (s) from the
// trust index; false when the index does not hold the hour or one of
// its entries has left the cache.
func (fb *fetchBucket) replay(rr *rowReader, t *trustIndex, bucket int, metric string, base int64) bool {
	th := t.findHour(bucket, metric, base)
	if th == nil {
		return false
	}
	for _, e := range th.entries {
		if e.gone.Load() {
			return false
		}
	}
	r := fb.fs.r
	mw := len(metric)
	tags := r.opts.Layout.Salt.Width() + mw + rowkey.TimestampBytes
	tsuid := append(rr.tsuid[:0], metric...)
	for _, e := range th.entries {
		tsuid = append(tsuid[:mw], e.key[tags:]...)
		id, ok := fb.fs.ids[string(tsuid)]
		if !ok {
			continue
		}
		r.cache.touch(e)
		r.c.trusted.Add(1)
		fb.rows = append(fb.rows, seriesRow{series: id, row: fetchedRow{base: base * 1000, entry: e}})
	}
	rr.tsuid = tsuid[:0]
	return true
}

// scanHours scans the bucket's hours from h0 to h1 (s) and records in
// the trust index each one it read whole.
func (fb *fetchBucket) scanHours(ctx context.Context, rr *rowReader, t *trustIndex, bucket int, metric string, h0, h1 int64) error {
	fs := fb.fs
	gen := t.gen() // before the scan: a write after it is marked later
	fb.recording, fb.met, fb.metEntries = true, fb.met[:0], fb.metEntries[:0]
	err := fs.r.scanTable(ctx, rr, fs.r.opts.Data, bucket, max(fs.sel.Start, h0*1000), min(fs.sel.End, h1*1000+rowkey.RowSpanMs-1),
		fs.sel, fs.ids, fb)
	fb.recording = false
	if err != nil {
		return err
	}
	met := fb.met
	for h := h0; h <= h1; h += rowkey.RowSpan {
		switch {
		case len(met) == 0 || met[0].base != h:
			t.recordHour(bucket, metric, h, gen, nil)
		case met[0].whole:
			t.recordHour(bucket, metric, h, gen, fb.metEntries[met[0].lo:met[0].hi])
			met = met[1:]
		default:
			met = met[1:]
		}
	}
	clear(fb.metEntries)
	return nil
}

// meet notes a row of the hour at baseSec as a recording scan meets it;
// rows come in key order, so hour after hour.
func (fb *fetchBucket) meet(baseSec int64) *metHour {
	if n := len(fb.met); n > 0 && fb.met[n-1].base == baseSec {
		return &fb.met[n-1]
	}
	n := len(fb.metEntries)
	fb.met = append(fb.met, metHour{base: baseSec, lo: n, hi: n, whole: true})
	return &fb.met[len(fb.met)-1]
}

// other notes a row the scan met that the fetch did not select: its hour
// is not read whole.
func (fb *fetchBucket) other(baseSec int64) {
	if fb.recording {
		fb.meet(baseSec).whole = false
	}
}

// metRow notes a selected row's entry once its last batch is in (nil: it
// has none, and its hour cannot be recorded).
func (fb *fetchBucket) metRow(baseSec int64, e *cacheEntry) {
	m := fb.meet(baseSec)
	if e == nil {
		m.whole = false
		return
	}
	fb.metEntries = append(fb.metEntries, e)
	m.hi = len(fb.metEntries)
}

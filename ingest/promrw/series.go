package promrw

import (
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
)

// startSeries reads the current TimeSeries' labels and counts; it returns
// why the series is bad, or "" with the point's metric and tags set and
// d.sp at its first sample.
func (d *Decoder) startSeries() string {
	d.refs, d.pt.Tags, d.pt.Metric, d.mask, d.pt.Key = d.refs[:0], d.pt.Tags[:0], nil, 0, nil
	d.samples, d.lazy = 0, false
	if d.opts.LazyNames && d.v == V1 {
		if first, ok := d.scanKey(); ok {
			d.sp = first
			return ""
		}
	}
	first, hist, ex, reason := d.scanSeries()
	if d.err != nil {
		return reason
	}
	d.stats.Histograms += int64(hist)
	d.stats.Exemplars += int64(ex)
	if d.v == V2 && reason == "" {
		reason = d.resolveRefs()
		if reason == "" && d.samples == 0 && hist == 0 {
			reason = "TimeSeries must contain at least one sample or histogram"
		}
	}
	if reason == "" && d.pt.Metric == nil && d.samples > 0 {
		reason = "missing __name__ label"
	}
	d.sp = first
	return reason
}

// scanKey walks the fields of the current 1.0 TimeSeries without reading
// its labels (LazyNames): when they lie together before any other field
// and samples follow, the point's Key is their bytes, its names are left
// for ParseNames, and ok is true with first the first sample's offset.
// Otherwise, a malformed series too, nothing is kept and the series is
// read whole, which says what is wrong as it always does.
func (d *Decoder) scanKey() (first int, ok bool) {
	ts := d.ts
	first = len(ts)
	ks, ke, samples, hist, ex := -1, -1, 0, 0, 0
	// What senders write: the labels first, each shorter than 128 bytes,
	// stepped over without the general loop's calls.
	i := 0
	for i+1 < len(ts) && ts[i] == 0x0a && ts[i+1] < 0x80 && i+2+int(ts[i+1]) <= len(ts) {
		i += 2 + int(ts[i+1])
	}
	if i > 0 {
		ks, ke = 0, i
	}
	for i < len(ts) {
		f, wt, j, ok := tag(ts, i)
		if !ok {
			return 0, false
		}
		switch {
		case f == 1 && wt == wireBytes:
			if ks < 0 {
				ks = i
			} else if ke != i {
				return 0, false // labels apart: read them as they come
			}
			_, e, ok := lenDelim(ts, j)
			if !ok {
				return 0, false
			}
			ke, i = e, e
			continue
		case f == 2 && wt == wireBytes:
			first = min(first, i)
			samples++
		case f == 4 && wt == wireBytes:
			hist++
		case f == 3 && wt == wireBytes:
			ex++
		}
		if i = skip(ts, j, wt); i < 0 {
			return 0, false
		}
	}
	if ks < 0 || samples == 0 || first < ke {
		return 0, false
	}
	d.pt.Key, d.lazy, d.samples = ts[ks:ke], true, samples
	d.stats.Histograms += int64(hist)
	d.stats.Exemplars += int64(ex)
	return first, true
}

// ParseNames reads the current point's names when LazyNames left them
// unread (parse.NamesDecoder). A bad series is refused with its samples
// as when its names are read first: the error is its *SeriesError, and
// Next goes on with the next series. A malformed series stops the body:
// the error is Err's.
func (d *Decoder) ParseNames() error {
	if !d.lazy {
		return nil
	}
	reason := d.readNames()
	if reason == "" && d.err == nil {
		return nil
	}
	d.stats.Samples-- // the current sample, yielded before its names were read
	if d.err != nil {
		return d.err
	}
	d.failSeries(reason)
	return &d.serr
}

// readNames reads the lazy series' labels into the point and returns why
// the series is bad, or "".
func (d *Decoder) readNames() string {
	d.lazy = false
	d.pt.Tags, d.pt.Metric, d.mask, d.samples = d.pt.Tags[:0], nil, 0, 0
	_, _, _, reason := d.scanSeries()
	if reason == "" && d.pt.Metric == nil {
		reason = "missing __name__ label"
	}
	return reason
}

// scanSeries walks the fields of the current TimeSeries once: labels (1.0)
// become the point's metric and tags, label refs (2.0) are collected, and
// samples, histograms and exemplars counted. first is the offset of the
// first sample (len(ts) if none); reason is the first label problem, and
// the walk goes on after it to count the samples.
func (d *Decoder) scanSeries() (first, hist, ex int, reason string) {
	ts := d.ts
	first = len(ts)
	histField, exField := uint64(4), uint64(3)
	if d.v == V2 {
		histField, exField = 3, 4
	}
	for i := 0; i < len(ts); {
		f, wt, j, ok := tag(ts, i)
		if !ok {
			return 0, 0, 0, d.fail(d.tsOff+i, "bad field key in timeseries")
		}
		switch {
		case f == 1 && d.v == V1 && wt == wireBytes:
			s, e, ok := lenDelim(ts, j)
			if !ok {
				return 0, 0, 0, d.fail(d.tsOff+j, "label overflows the timeseries")
			}
			name, value, ok := d.label(ts[s:e], d.tsOff+s)
			if !ok {
				return 0, 0, 0, "malformed"
			}
			if reason == "" {
				reason = d.addLabel(name, value)
			}
			i = e
			continue
		case f == 1 && d.v == V2 && (wt == wireBytes || wt == wireVarint):
			if i = d.readRefs(ts, j, wt); i < 0 {
				return 0, 0, 0, d.fail(d.tsOff+j, "bad labels_refs")
			}
			continue
		case f == 2 && wt == wireBytes:
			first = min(first, i)
			d.samples++
		case f == histField && wt == wireBytes:
			hist++
		case f == exField && wt == wireBytes:
			ex++
		}
		if i = skip(ts, j, wt); i < 0 {
			return 0, 0, 0, d.fail(d.tsOff+j, badField(f, wt)+" in timeseries")
		}
	}
	return first, hist, ex, reason
}

// label reads a 1.0 Label message; ok is false when it is malformed
// (d.err is set).
func (d *Decoder) label(m []byte, off int) (name, value []byte, ok bool) {
	// Fast path: what every sender writes, name then value, each shorter
	// than 128 bytes, nothing else.
	if len(m) >= 4 && m[0] == 0x0a && m[1] < 0x80 {
		ne := 2 + int(m[1])
		if ne+2 <= len(m) && m[ne] == 0x12 && m[ne+1] < 0x80 && ne+2+int(m[ne+1]) == len(m) {
			return m[2:ne], m[ne+2:], true
		}
	}
	name, value = m[:0], m[:0]
	for i := 0; i < len(m); {
		f, wt, j, ok := tag(m, i)
		if !ok {
			d.fail(off+i, "bad field key in label")
			return nil, nil, false
		}
		if (f == 1 || f == 2) && wt == wireBytes {
			s, e, ok := lenDelim(m, j)
			if !ok {
				d.fail(off+j, "label string overflows the label")
				return nil, nil, false
			}
			if f == 1 {
				name = m[s:e]
			} else {
				value = m[s:e]
			}
			i = e
			continue
		}
		if i = skip(m, j, wt); i < 0 {
			d.fail(off+j, badField(f, wt)+" in label")
			return nil, nil, false
		}
	}
	return name, value, true
}

// readRefs appends 2.0 label refs, packed (wireBytes) or one varint.
func (d *Decoder) readRefs(ts []byte, j, wt int) int {
	if wt == wireVarint {
		v, next := uvarint(ts, j)
		if next < 0 || v > 1<<32-1 {
			return -1
		}
		d.refs = append(d.refs, uint32(v))
		return next
	}
	s, e, ok := lenDelim(ts, j)
	if !ok {
		return -1
	}
	for k := s; k < e; {
		v, next := uvarint(ts[:e], k)
		if next < 0 || v > 1<<32-1 {
			return -1
		}
		d.refs = append(d.refs, uint32(v))
		k = next
	}
	return e
}

// resolveRefs turns 2.0 label refs into the point's metric and tags.
func (d *Decoder) resolveRefs() string {
	if len(d.refs)%2 != 0 {
		return "invalid labelRefs length " + strconv.Itoa(len(d.refs))
	}
	n := uint32(len(d.syms) / 2)
	for k := 0; k < len(d.refs); k += 2 {
		nr, vr := d.refs[k], d.refs[k+1]
		if nr >= n || vr >= n {
			return "labelRefs " + strconv.Itoa(int(nr)) + " (name) = " + strconv.Itoa(int(vr)) +
				" (value) outside of symbols table (size " + strconv.Itoa(int(n)) + ")"
		}
		if reason := d.addLabel(d.symbol(nr), d.symbol(vr)); reason != "" {
			return reason
		}
	}
	return ""
}

func (d *Decoder) symbol(r uint32) []byte {
	return d.raw[d.syms[2*r]:d.syms[2*r+1]]
}

// seriesLabels returns the current series' labels as sent, for an error:
// 1.0 labels read again from the message, 2.0 labels resolved from the
// symbols, or the raw refs when they do not resolve.
func (d *Decoder) seriesLabels() string {
	var ls []parse.Tag
	if d.v == V2 {
		n := uint32(len(d.syms) / 2)
		if len(d.refs)%2 != 0 {
			return formatRefs(d.refs)
		}
		for k := 0; k < len(d.refs); k += 2 {
			if d.refs[k] >= n || d.refs[k+1] >= n {
				return formatRefs(d.refs)
			}
			ls = append(ls, parse.Tag{Key: d.symbol(d.refs[k]), Value: d.symbol(d.refs[k+1])})
		}
		return formatLabels(ls)
	}
	for i := 0; i < len(d.ts); {
		f, wt, j, ok := tag(d.ts, i)
		if !ok {
			break
		}
		if f == 1 && wt == wireBytes {
			if s, e, ok := lenDelim(d.ts, j); ok {
				if name, value, ok := d.label(d.ts[s:e], 0); ok {
					ls = append(ls, parse.Tag{Key: name, Value: value})
				}
			}
		}
		if i = skip(d.ts, j, wt); i < 0 {
			break
		}
	}
	return formatLabels(ls)
}

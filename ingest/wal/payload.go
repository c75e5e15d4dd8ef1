package wal

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tsd-db/tsd/series"
)

// formatVersion is the first payload byte of every segment header.
const formatVersion = 1

// AppendHeader appends a segment header payload: the format version, the
// segment's index and, when known, the valid length of the previous segment
// (stored plus one, so zero means unknown).
func AppendHeader(dst []byte, seg uint32, prevLen int64) []byte {
	dst = append(dst, formatVersion)
	dst = binary.AppendUvarint(dst, uint64(seg))
	return binary.AppendUvarint(dst, uint64(prevLen+1))
}

// ParseHeader decodes a segment header payload. prevLen is -1 when the
// writer did not know the previous segment's length.
func ParseHeader(b []byte) (seg uint32, prevLen int64, err error) {
	if len(b) == 0 || b[0] != formatVersion {
		return 0, 0, fmt.Errorf("%w: segment header version", ErrCorruptRecord)
	}
	s, n := binary.Uvarint(b[1:])
	if n <= 0 || s > math.MaxUint32 {
		return 0, 0, fmt.Errorf("%w: segment header index", ErrCorruptRecord)
	}
	p, m := binary.Uvarint(b[1+n:])
	if m <= 0 || p > math.MaxInt64 || 1+n+m != len(b) {
		return 0, 0, fmt.Errorf("%w: segment header length", ErrCorruptRecord)
	}
	return uint32(s), int64(p) - 1, nil
}

// AppendSeries appends one entry of a series record payload: the series'
// log-local id and its key bytes.
func AppendSeries(dst []byte, ref uint64, key []byte) []byte {
	dst = binary.AppendUvarint(dst, ref)
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// SeriesDecoder walks the entries of a series record payload. The zero
// value is empty; errors are sticky.
type SeriesDecoder struct {
	b   []byte
	err error
}

// Reset starts decoding payload b.
func (d *SeriesDecoder) Reset(b []byte) { d.b, d.err = b, nil }

// Next returns the next entry. key aliases the payload.
func (d *SeriesDecoder) Next() (ref uint64, key []byte, ok bool) {
	if len(d.b) == 0 || d.err != nil {
		return 0, nil, false
	}
	ref, n := binary.Uvarint(d.b)
	if n <= 0 {
		return d.fail("series id")
	}
	l, m := binary.Uvarint(d.b[n:])
	if m <= 0 || l > uint64(len(d.b)-n-m) {
		return d.fail("series key length")
	}
	key = d.b[n+m : n+m+int(l)]
	d.b = d.b[n+m+int(l):]
	return ref, key, true
}

func (d *SeriesDecoder) fail(what string) (uint64, []byte, bool) {
	d.err = fmt.Errorf("%w: series record: bad %s", ErrCorruptRecord, what)
	return 0, nil, false
}

// Err returns the error that stopped Next.
func (d *SeriesDecoder) Err() error { return d.err }

// SamplesEncoder appends samples to a samples record payload. Each sample
// is stored relative to the previous one of the same payload, so call Reset
// at the start of every payload.
type SamplesEncoder struct {
	ref uint64
	t   int64
	ms  bool // a TypeSamplesMs payload
}

// Reset starts a new TypeSamples payload, whose points lose Ms.
func (e *SamplesEncoder) Reset() { *e = SamplesEncoder{} }

// ResetMs starts a new TypeSamplesMs payload, which keeps each point's Ms.
func (e *SamplesEncoder) ResetMs() { *e = SamplesEncoder{ms: true} }

// Append appends sample (ref, p) to dst. ref must be below 2^60.
func (e *SamplesEncoder) Append(dst []byte, ref uint64, p series.Point) []byte {
	if e.ms {
		u := zigzag(int64(ref-e.ref))<<3 | uint64(p.Kind)
		if p.Ms {
			u |= 4
		}
		dst = binary.AppendUvarint(dst, u)
	} else {
		dst = binary.AppendUvarint(dst, zigzag(int64(ref-e.ref))<<2|uint64(p.Kind))
	}
	dst = binary.AppendVarint(dst, p.T-e.t)
	e.ref, e.t = ref, p.T
	switch p.Kind {
	case series.Int:
		return binary.AppendVarint(dst, int64(p.Bits))
	case series.Float32:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(math.Float64frombits(p.Bits))))
	default:
		return binary.LittleEndian.AppendUint64(dst, p.Bits)
	}
}

// SamplesDecoder walks the samples of a samples record payload. The zero
// value is empty; errors are sticky.
type SamplesDecoder struct {
	b   []byte
	ref uint64
	t   int64
	ms  bool // a TypeSamplesMs payload
	err error
}

// Reset starts decoding payload b of a TypeSamples record.
func (d *SamplesDecoder) Reset(b []byte) { *d = SamplesDecoder{b: b} }

// ResetMs starts decoding payload b of a TypeSamplesMs record.
func (d *SamplesDecoder) ResetMs(b []byte) { *d = SamplesDecoder{b: b, ms: true} }

// Next returns the next sample.
func (d *SamplesDecoder) Next() (ref uint64, p series.Point, ok bool) {
	if len(d.b) == 0 || d.err != nil {
		return 0, p, false
	}
	rk, n := binary.Uvarint(d.b)
	if n <= 0 || rk&3 > uint64(series.Float64) {
		return d.fail("series id or kind")
	}
	ms := false
	if d.ms {
		ms, rk = rk&4 != 0, rk>>1&^3|rk&3 // drop the mark: the layout of TypeSamples
	}
	dt, m := binary.Varint(d.b[n:])
	if m <= 0 {
		return d.fail("timestamp")
	}
	d.b = d.b[n+m:]
	d.ref += uint64(unzigzag(rk >> 2))
	d.t += dt
	p = series.Point{T: d.t, Kind: series.Kind(rk & 3), Ms: ms}
	if !d.value(&p) {
		return d.fail("value")
	}
	return d.ref, p, true
}

// value decodes p's value bits by its kind.
func (d *SamplesDecoder) value(p *series.Point) bool {
	switch p.Kind {
	case series.Int:
		v, n := binary.Varint(d.b)
		if n <= 0 {
			return false
		}
		p.Bits, d.b = uint64(v), d.b[n:]
	case series.Float32:
		if len(d.b) < 4 {
			return false
		}
		p.Bits = math.Float64bits(float64(math.Float32frombits(binary.LittleEndian.Uint32(d.b))))
		d.b = d.b[4:]
	default:
		if len(d.b) < 8 {
			return false
		}
		p.Bits, d.b = binary.LittleEndian.Uint64(d.b), d.b[8:]
	}
	return true
}

func (d *SamplesDecoder) fail(what string) (uint64, series.Point, bool) {
	d.err = fmt.Errorf("%w: samples record: bad %s", ErrCorruptRecord, what)
	return 0, series.Point{}, false
}

// Err returns the error that stopped Next.
func (d *SamplesDecoder) Err() error { return d.err }

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

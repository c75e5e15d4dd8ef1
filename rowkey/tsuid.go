package rowkey

import (
	"encoding/binary"
	"encoding/hex"
)

// AppendTSUID appends the TSUID of a series: metric UID then the sorted
// tag pairs (the row key without salt and base time). Tags are sorted in
// place.
func (l *Layout) AppendTSUID(dst, metric []byte, tags []Tag) ([]byte, error) {
	if err := l.checkSeries(metric, tags); err != nil {
		return dst, err
	}
	if err := SortTags(tags); err != nil {
		return dst, err
	}
	dst = append(dst, metric...)
	for _, t := range tags {
		dst = append(append(dst, t.Key...), t.Value...)
	}
	return dst, nil
}

// ParseTSUID splits a TSUID into its metric UID and tag pairs (aliasing
// tsuid) and checks its length and tag order.
func (l *Layout) ParseTSUID(tsuid []byte) (metric, tags []byte, err error) {
	m, pair := l.Widths.Metric, l.pairWidth()
	if len(tsuid) < m || (len(tsuid)-m)%pair != 0 {
		return nil, nil, corruptf("tsuid %s: length %d is not %d + n*%d", hex.EncodeToString(tsuid), len(tsuid), m, pair)
	}
	if err := checkTagOrder(tsuid[m:], pair, l.Widths.TagK); err != nil {
		return nil, nil, corruptf("tsuid %s: %v", hex.EncodeToString(tsuid), err)
	}
	return tsuid[:m], tsuid[m:], nil
}

// AppendRowKeyFromTSUID appends the row key of the series tsuid for the
// hour holding ms, salt included: the cheap path for a writer that keeps
// each series' TSUID.
func (l *Layout) AppendRowKeyFromTSUID(dst, tsuid []byte, ms int64) ([]byte, error) {
	metric, tags, err := l.ParseTSUID(tsuid)
	if err != nil {
		return dst, err
	}
	if err := checkTime(ms); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, zeros[:l.Salt.Width()]...)
	dst = append(dst, metric...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(BaseTime(ms)))
	dst = append(dst, tags...)
	l.putSalt(dst[start:])
	return dst, nil
}

// SetKeyTime sets the base time of key, a whole row key, to the hour
// holding ms, in place: the key of the same series for another hour,
// since the salt hashes the metric and tags but not the time. A reader
// going through a series hour by hour thus builds its key once.
func (l *Layout) SetKeyTime(key []byte, ms int64) error {
	if err := checkTime(ms); err != nil {
		return err
	}
	at := l.Salt.Width() + l.Widths.Metric
	if len(key) < at+TimestampBytes {
		return invalidf("row key %x: %d bytes, too short for a base time at %d", key, len(key), at)
	}
	binary.BigEndian.PutUint32(key[at:], uint32(BaseTime(ms)))
	return nil
}

const upperHex = "0123456789ABCDEF"

// AppendTSUIDHex appends tsuid as uppercase hex, as OpenTSDB's API shows it.
func AppendTSUIDHex(dst, tsuid []byte) []byte {
	for _, b := range tsuid {
		dst = append(dst, upperHex[b>>4], upperHex[b&15])
	}
	return dst
}

// AppendParseTSUIDHex decodes a hex TSUID (either case) and appends its
// bytes to dst.
func AppendParseTSUIDHex(dst []byte, s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return dst, invalidf("tsuid %q has an odd number of hex digits", s)
	}
	for i := 0; i < len(s); i += 2 {
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return dst, invalidf("tsuid %q: bad hex digit at %d", s, i)
		}
		dst = append(dst, hi<<4|lo)
	}
	return dst, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

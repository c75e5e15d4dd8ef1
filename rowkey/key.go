package rowkey

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"

	"github.com/tsd-db/tsd/salt"
)

const (
	// TimestampBytes is the width of a row key's base time.
	TimestampBytes = 4
	// RowSpan is the time one row covers, in seconds (OpenTSDB's
	// MAX_TIMESPAN).
	RowSpan = 3600
	// RowSpanMs is RowSpan in milliseconds.
	RowSpanMs = RowSpan * 1000
	// MaxTimestamp is the last millisecond whose base time fits the
	// row key's unsigned 32-bit seconds.
	MaxTimestamp = (1<<32-1)*1000 + 999
)

// Tag is one tag as UIDs. Slices are not retained.
type Tag struct {
	Key, Value []byte
}

// BaseTime returns the row base time in seconds of a timestamp in
// milliseconds (ms >= 0): seconds minus seconds mod 3600.
func BaseTime(ms int64) int64 {
	s := ms / 1000
	return s - s%RowSpan
}

func checkTime(ms int64) error {
	if ms < 0 || ms > MaxTimestamp {
		return invalidf("timestamp %d ms outside 0..%d", ms, int64(MaxTimestamp))
	}
	return nil
}

// SortTags sorts tags by the bytes of tagk then tagv, OpenTSDB's memcmp
// order of the concatenated UIDs, in place and without allocating, and
// rejects a tag key given twice.
func SortTags(tags []Tag) error {
	for i := 1; i < len(tags); i++ {
		for j := i; j > 0 && lessTag(tags[j], tags[j-1]); j-- {
			tags[j], tags[j-1] = tags[j-1], tags[j]
		}
	}
	for i := 1; i < len(tags); i++ {
		if bytes.Equal(tags[i].Key, tags[i-1].Key) {
			return invalidf("duplicate tag key uid %s", hex.EncodeToString(tags[i].Key))
		}
	}
	return nil
}

func lessTag(a, b Tag) bool {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c < 0
	}
	return bytes.Compare(a.Value, b.Value) < 0
}

// checkSeries validates widths and the tag count of a new series.
func (l *Layout) checkSeries(metric []byte, tags []Tag) error {
	if len(metric) != l.Widths.Metric {
		return invalidf("metric uid %s is %d bytes, want %d", hex.EncodeToString(metric), len(metric), l.Widths.Metric)
	}
	if len(tags) > l.MaxTags {
		return fmtTooMany(len(tags), l.MaxTags)
	}
	for _, t := range tags {
		if len(t.Key) != l.Widths.TagK || len(t.Value) != l.Widths.TagV {
			return invalidf("tag uids %s=%s are %d and %d bytes, want %d and %d",
				hex.EncodeToString(t.Key), hex.EncodeToString(t.Value),
				len(t.Key), len(t.Value), l.Widths.TagK, l.Widths.TagV)
		}
	}
	return nil
}

func fmtTooMany(n, max int) error {
	return wrapf(ErrTooManyTags, "%d maximum allowed: %d", n, max)
}

// AppendRowKey appends the row key of the series (metric, tags) for the
// hour holding ms: [salt][metric][base time][tagk tagv]... Tags are sorted
// in place (SortTags). Zero tags are allowed; more than MaxTags is
// ErrTooManyTags.
func (l *Layout) AppendRowKey(dst, metric []byte, ms int64, tags []Tag) ([]byte, error) {
	if err := l.checkSeries(metric, tags); err != nil {
		return dst, err
	}
	if err := checkTime(ms); err != nil {
		return dst, err
	}
	if err := SortTags(tags); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, zeros[:l.Salt.Width()]...)
	dst = append(dst, metric...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(BaseTime(ms)))
	for _, t := range tags {
		dst = append(append(dst, t.Key...), t.Value...)
	}
	l.putSalt(dst[start:])
	return dst, nil
}

var zeros [16]byte

// putSalt fills the salt bytes of a complete key from its metric and tags.
// The all-zero metric (global annotations) keeps zero salt bytes.
func (l *Layout) putSalt(key []byte) {
	if l.Salt.Width() > 0 {
		l.Salt.PutBucket(key, l.bucketOf(key))
	}
}

// bucketOf hashes the metric and tags of a complete key (bucket 0 for the
// all-zero metric).
func (l *Layout) bucketOf(key []byte) int {
	w := l.Salt.Width()
	metric := key[w : w+l.Widths.Metric]
	if isZero(metric) {
		return 0
	}
	return l.Salt.BucketOf(salt.Hash(salt.Hash(salt.HashInit, metric), key[l.prefixLen():]))
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// AppendKeyPrefix appends [salt bytes of bucket][metric][base time of ms],
// the start of every row of metric in that hour and bucket. A scan's
// bounds come from BucketRange.
func (l *Layout) AppendKeyPrefix(dst []byte, bucket int, metric []byte, ms int64) []byte {
	dst = l.Salt.AppendBucket(dst, bucket)
	dst = append(dst, metric...)
	return binary.BigEndian.AppendUint32(dst, uint32(BaseTime(ms)))
}

// Buckets returns how many salt buckets a metric's rows spread over: the
// salt's bucket count, or 1 without salt.
func (l *Layout) Buckets() int {
	if !l.Salt.Enabled() {
		return 1
	}
	return l.Salt.Buckets()
}

// BucketRange returns the key range [start, stop) of metric's rows in one
// salt bucket whose hours hold a time in [startMs, endMs]: from the row of
// startMs's hour to the first row after endMs's hour or, when that hour's
// base time does not fit the key, past every row of the metric in the
// bucket (a nil stop when nothing sorts after: the end of the table). A
// scan of every bucket (0 to Buckets()-1) reads all of the metric's rows
// over the span. The two keys share one allocation.
func (l *Layout) BucketRange(bucket int, metric []byte, startMs, endMs int64) (start, stop []byte) {
	n := l.Salt.Width() + len(metric) + TimestampBytes
	buf := l.AppendKeyPrefix(make([]byte, 0, 2*n), bucket, metric, startMs)
	start = buf[:n:n]
	if next := BaseTime(endMs) + RowSpan; next <= math.MaxUint32 {
		return start, l.AppendKeyPrefix(buf, bucket, metric, next*1000)[n:]
	}
	stop = append(l.Salt.AppendBucket(buf, bucket), metric...)[n:]
	for i := len(stop) - 1; i >= 0; i-- {
		if stop[i]++; stop[i] != 0 {
			return start, stop[:i+1]
		}
	}
	return start, nil
}

// AppendGlobalAnnotationRowKey appends the key of OpenTSDB's global
// annotation row for the hour of ms: zero salt, zero metric, no tags.
func (l *Layout) AppendGlobalAnnotationRowKey(dst []byte, ms int64) []byte {
	dst = append(dst, zeros[:l.Salt.Width()]...)
	dst = append(dst, zeros[:l.Widths.Metric]...)
	return binary.BigEndian.AppendUint32(dst, uint32(BaseTime(ms)))
}

// Key is a parsed row key. Its slices alias the parsed bytes.
type Key struct {
	// Salt is the salt prefix (empty without salt).
	Salt []byte
	// Metric is the metric UID.
	Metric []byte
	// Base is the row's base time in seconds.
	Base int64
	// Tags holds the tag pairs, tagk then tagv, in key order.
	Tags []byte
	pair int
	tagk int
}

// NumTags returns the number of tag pairs.
func (k *Key) NumTags() int {
	if k.pair == 0 {
		return 0
	}
	return len(k.Tags) / k.pair
}

// Tag returns the i-th tag key and value UIDs.
func (k *Key) Tag(i int) (key, value []byte) {
	p := k.Tags[i*k.pair : (i+1)*k.pair]
	return p[:k.tagk], p[k.tagk:]
}

// BaseMs returns the base time in milliseconds.
func (k *Key) BaseMs() int64 { return k.Base * 1000 }

// AppendTSUID appends the key's TSUID: metric then tag pairs.
func (k *Key) AppendTSUID(dst []byte) []byte {
	return append(append(dst, k.Metric...), k.Tags...)
}

// ParseRowKey splits a data row key and checks it: its length fits the
// layout, tag keys ascend strictly, and the salt is the one the series
// hashes to. The tag count is not limited (MaxTags binds only new series).
func (l *Layout) ParseRowKey(key []byte) (Key, error) {
	pre, pair := l.prefixLen(), l.pairWidth()
	if len(key) < pre || (len(key)-pre)%pair != 0 {
		return Key{}, corruptf("row key %s: length %d is not %d + n*%d", hex.EncodeToString(key), len(key), pre, pair)
	}
	w := l.Salt.Width()
	k := Key{
		Salt:   key[:w],
		Metric: key[w : w+l.Widths.Metric],
		Base:   int64(binary.BigEndian.Uint32(key[pre-TimestampBytes:])),
		Tags:   key[pre:],
		pair:   pair,
		tagk:   l.Widths.TagK,
	}
	if err := l.checkKey(key, &k); err != nil {
		return Key{}, err
	}
	return k, nil
}

func (l *Layout) checkKey(key []byte, k *Key) error {
	if err := checkTagOrder(k.Tags, k.pair, k.tagk); err != nil {
		return corruptf("row key %s: %v", hex.EncodeToString(key), err)
	}
	if k.Base%RowSpan != 0 {
		return corruptf("row key %s: base time %d is not a whole hour", hex.EncodeToString(key), k.Base)
	}
	if w := l.Salt.Width(); w > 0 {
		var want [salt.MaxWidth]byte
		l.Salt.PutBucket(want[:w], l.bucketOf(key))
		if !bytes.Equal(want[:w], k.Salt) {
			return corruptf("row key %s: salt does not match the series (%s)", hex.EncodeToString(key), l.Salt)
		}
	}
	return nil
}

// checkTagOrder requires strictly ascending tag keys.
func checkTagOrder(tags []byte, pair, tagk int) error {
	for off := pair; off < len(tags); off += pair {
		if bytes.Compare(tags[off-pair:off-pair+tagk], tags[off:off+tagk]) >= 0 {
			return wrapf(ErrCorrupt, "tag keys out of order or repeated at tag %d", off/pair)
		}
	}
	return nil
}

package ingesttest

import (
	"math/rand/v2"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// T0 is the tests' first hour, 2026-01-01T00:00:00Z in Unix ms.
const T0 = 1_767_225_600_000

// hour is a row's span in ms, the head's RowSpan.
const hour = rowkey.RowSpanMs

// rowBase returns the first millisecond of the hour holding t.
func rowBase(t int64) int64 { return t - t%hour }

// SeriesKey builds a key with 3-byte UIDs: metric, then tagk/tagv pairs.
func SeriesKey(metric uint32, tags ...uint32) []byte {
	b := []byte{byte(metric >> 16), byte(metric >> 8), byte(metric)}
	for _, u := range tags {
		b = append(b, byte(u>>16), byte(u>>8), byte(u))
	}
	return b
}

// Keys returns n distinct series keys over three metrics.
func Keys(n int) [][]byte {
	var keys [][]byte
	for i := range n {
		keys = append(keys, SeriesKey(uint32(1+i%3), 1, uint32(10+i), 2, 7))
	}
	return keys
}

// RandomPoint returns a point of kind chosen at random, near tm.
func RandomPoint(rng *rand.Rand, tm int64) series.Point {
	switch rng.IntN(4) {
	case 0:
		return series.Float64Point(tm, rng.NormFloat64())
	case 1:
		return series.Float32Point(tm, float32(rng.IntN(100))/4)
	default:
		return series.IntPoint(tm, int64(rng.IntN(200)-100))
	}
}

// KeyAppender is the part of a head's appender AppendRandom uses; R is
// the head's series reference.
type KeyAppender[R any] interface {
	AppendKey(key []byte, p series.Point) (R, error)
	Commit(sync bool) error
}

// CommitPoint commits p to the series key through a, unsynced, and
// records it in m.
func CommitPoint[R any](t testing.TB, a KeyAppender[R], m Model, key []byte, p series.Point) {
	t.Helper()
	if _, err := a.AppendKey(key, p); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
	m.Add(key, p)
}

// AppendRandom commits n random points over keys through a, in commits of
// 100, some out of order and some overwriting earlier timestamps, and
// records them in m.
func AppendRandom[R any](t testing.TB, a KeyAppender[R], rng *rand.Rand, keys [][]byte, n int, m Model) {
	t.Helper()
	for i := range n {
		key := keys[rng.IntN(len(keys))]
		tm := T0 + int64(i)*1000 + int64(rng.IntN(3))*hour
		if rng.IntN(10) == 0 {
			tm -= int64(rng.IntN(100_000)) // out of order, sometimes a duplicate
		}
		p := RandomPoint(rng, tm)
		if _, err := a.AppendKey(key, p); err != nil {
			t.Fatal(err)
		}
		m.Add(key, p)
		if i%100 == 99 {
			if err := a.Commit(i%1000 == 999); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Commit(false); err != nil {
		t.Fatal(err)
	}
}

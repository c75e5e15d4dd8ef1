package head

import (
	"bytes"

	"github.com/tsd-db/tsd/series"
)

// SortSeriesKey sorts the tag pairs of key (metric UID ‖ (tagk UID ‖ tagv
// UID)*, widths w) in place by tag key UID bytes, the order the head and
// row keys need; uid.ResolvePoint returns them in tag-name order. It does
// not allocate. A key whose length does not fit w is left as it is (the
// head rejects it).
func SortSeriesKey(key []byte, w series.Widths) {
	pair := w.TagK + w.TagV
	if pair == 0 || len(key) < w.Metric || (len(key)-w.Metric)%pair != 0 {
		return
	}
	tags := key[w.Metric:]
	n := len(tags) / pair
	var tmp [16]byte // widths are at most 8 bytes each
	for i := 1; i < n; i++ {
		for j := i; j > 0 && bytes.Compare(tags[(j-1)*pair:(j-1)*pair+w.TagK], tags[j*pair:j*pair+w.TagK]) > 0; j-- {
			a, b := tags[(j-1)*pair:j*pair], tags[j*pair:(j+1)*pair]
			copy(tmp[:pair], a)
			copy(a, b)
			copy(b, tmp[:pair])
		}
	}
}

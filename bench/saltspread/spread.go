package saltspread

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/uid"
)

var quiet = slog.New(slog.DiscardHandler)

// Result is the spread of a set of series over one salt's buckets.
type Result struct {
	// Salt is the measured setting.
	Salt salt.Salt
	// Counts holds the series per bucket; its length is the bucket count,
	// 1 for width 0.
	Counts []int
}

// Spread counts t's series per salt bucket under s, reading each bucket back
// from the salt bytes of the series' row key for the dataset's first hour.
// It fails if a key's salt bytes disagree with salt.Bucket of its TSUID, and
// refuses more buckets than the width's bytes can number.
func Spread(t *TSUIDs, s salt.Salt) (Result, error) {
	l := rowkey.Layout{Salt: s}
	l.Widths.Metric = t.UIDs.Width(uid.Metric)
	l.Widths.TagK = t.UIDs.Width(uid.TagK)
	l.Widths.TagV = t.UIDs.Width(uid.TagV)
	l.EnsureDefaults()
	if err := l.Validate(); err != nil {
		return Result{}, err
	}
	if w := s.Width(); w > 0 && w < 4 && s.Buckets() > 1<<(8*w) {
		// The key keeps only the bucket's low bytes: buckets would merge.
		return Result{}, fmt.Errorf("%w: %d buckets do not fit in %d salt bytes", ErrInvalid, s.Buckets(), w)
	}
	r := Result{Salt: s, Counts: make([]int, 1)}
	if s.Enabled() {
		r.Counts = make([]int, s.Buckets())
	}
	ms := gen.DefaultStart.UnixMilli()
	var key []byte
	for i, tsuid := range t.Keys {
		var err error
		if key, err = l.AppendRowKeyFromTSUID(key[:0], tsuid, ms); err != nil {
			return Result{}, fmt.Errorf("saltspread: row key of series %d: %w", i, err)
		}
		b := 0
		if s.Enabled() {
			b = salt.Decode(key[:s.Width()])
			if want := s.Bucket(tsuid); b != want {
				return Result{}, fmt.Errorf("saltspread: series %d: key salt says bucket %d, salt.Bucket %d", i, b, want)
			}
		}
		if b < 0 || b >= len(r.Counts) {
			return Result{}, fmt.Errorf("saltspread: series %d: bucket %d not in 0..%d", i, b, len(r.Counts)-1)
		}
		r.Counts[b]++
	}
	return r, nil
}

// Sum returns the number of series counted.
func (r Result) Sum() int {
	n := 0
	for _, c := range r.Counts {
		n += c
	}
	return n
}

// Mean returns the average series per bucket.
func (r Result) Mean() float64 { return float64(r.Sum()) / float64(len(r.Counts)) }

// Max returns the fullest bucket and its count (the first on a tie).
func (r Result) Max() (bucket, n int) {
	for i, c := range r.Counts {
		if i == 0 || c > n {
			bucket, n = i, c
		}
	}
	return bucket, n
}

// Min returns the emptiest bucket and its count (the first on a tie).
func (r Result) Min() (bucket, n int) {
	for i, c := range r.Counts {
		if i == 0 || c < n {
			bucket, n = i, c
		}
	}
	return bucket, n
}

// Ratio returns max/mean, 1 for a perfect spread (0 when nothing was counted).
func (r Result) Ratio() float64 {
	mean := r.Mean()
	if mean == 0 {
		return 0
	}
	_, mx := r.Max()
	return float64(mx) / mean
}

// WriteTable writes one line per bucket and then the summary.
func (r Result) WriteTable(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "bucket  series\n"); err != nil {
		return err
	}
	for i, c := range r.Counts {
		if _, err := fmt.Fprintf(w, "%6d  %6d\n", i, c); err != nil {
			return err
		}
	}
	return r.WriteSummary(w)
}

// WriteSummary writes the one-line summary: salt, series, mean, max, min and
// max/mean.
func (r Result) WriteSummary(w io.Writer) error {
	bmax, nmax := r.Max()
	bmin, nmin := r.Min()
	_, err := fmt.Fprintf(w, "salt width %d, %d buckets: %d series, mean %.1f, max %d (bucket %d), min %d (bucket %d), max/mean %.4f\n",
		r.Salt.Width(), len(r.Counts), r.Sum(), r.Mean(), nmax, bmax, nmin, bmin, r.Ratio())
	return err
}

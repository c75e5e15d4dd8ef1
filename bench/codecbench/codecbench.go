package codecbench

import (
	"fmt"
	"time"

	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/series"
)

// XORChunkSamples is Prometheus's target samples per chunk.
const XORChunkSamples = 120

// Encoded is a dataset encoded both ways.
type Encoded struct {
	// Points is the number of points.
	Points int
	// Dense holds one dense value per series and hour; Bases their base
	// times in seconds.
	Dense [][]byte
	Bases []int64
	// XOR holds the XOR chunks' bytes.
	XOR [][]byte
}

// Encode streams cfg's dataset hour by hour and encodes every row both ways.
func Encode(cfg gen.Config) (*Encoded, error) {
	g, err := gen.New(cfg)
	if err != nil {
		return nil, err
	}
	e := &Encoded{}
	var enc rowkey.DenseEncoder
	rows := make([][]series.Point, g.NumSeries())
	nm := len(g.Metrics())
	base := int64(-1)
	var p gen.Point
	for g.Next(&p) {
		if b := rowkey.BaseTime(p.T); b != base {
			if err := e.addHour(&enc, base, rows); err != nil {
				return nil, err
			}
			base = b
		}
		i := p.Host*nm + p.Metric
		rows[i] = append(rows[i], p.Series())
	}
	return e, e.addHour(&enc, base, rows)
}

// addHour encodes and then empties the rows of one hour.
func (e *Encoded) addHour(enc *rowkey.DenseEncoder, base int64, rows [][]series.Point) error {
	for i, row := range rows {
		if len(row) == 0 {
			continue
		}
		v, err := enc.Append(nil, base, row)
		if err != nil {
			return fmt.Errorf("dense encode row %d at %d: %w", i, base, err)
		}
		e.Dense, e.Bases = append(e.Dense, v), append(e.Bases, base)
		for j := 0; j < len(row); j += XORChunkSamples {
			e.XOR = append(e.XOR, xorChunk(row[j:min(j+XORChunkSamples, len(row))]))
		}
		e.Points += len(row)
		rows[i] = row[:0]
	}
	return nil
}

func xorChunk(pts []series.Point) []byte {
	c := chunkenc.NewXORChunk()
	app, _ := c.Appender() // a new chunk always has an appender
	for _, p := range pts {
		app.Append(0, p.T, p.Float())
	}
	return c.Bytes()
}

// DenseBytesPerPoint returns the dense value bytes per point.
func (e *Encoded) DenseBytesPerPoint() float64 { return perPoint(e.Dense, e.Points) }

// XORBytesPerPoint returns the XOR chunk bytes per point.
func (e *Encoded) XORBytesPerPoint() float64 { return perPoint(e.XOR, e.Points) }

func perPoint(vs [][]byte, points int) float64 {
	n := 0
	for _, v := range vs {
		n += len(v)
	}
	return float64(n) / float64(points)
}

// DecodeDense decodes every dense value and returns points per second. It
// fails unless every point comes back.
func (e *Encoded) DecodeDense() (float64, error) {
	var it rowkey.DenseIter
	n := 0
	var sum float64
	start := time.Now()
	for i, v := range e.Dense {
		if err := it.Reset(e.Bases[i], v); err != nil {
			return 0, err
		}
		for it.Next() {
			sum += it.At().Float()
			n++
		}
		if err := it.Err(); err != nil {
			return 0, err
		}
	}
	return e.rate(n, time.Since(start), sum)
}

// DecodeXOR iterates every XOR chunk and returns points per second.
func (e *Encoded) DecodeXOR() (float64, error) {
	var it chunkenc.Iterator
	n := 0
	var sum float64
	start := time.Now()
	for _, b := range e.XOR {
		c, err := chunkenc.FromData(chunkenc.EncXOR, b)
		if err != nil {
			return 0, err
		}
		it = c.Iterator(it)
		for it.Next() == chunkenc.ValFloat {
			_, v := it.At()
			sum += v
			n++
		}
		if err := it.Err(); err != nil {
			return 0, err
		}
	}
	return e.rate(n, time.Since(start), sum)
}

var sink float64

func (e *Encoded) rate(n int, d time.Duration, sum float64) (float64, error) {
	sink = sum
	if n != e.Points {
		return 0, fmt.Errorf("decoded %d points, want %d", n, e.Points)
	}
	return float64(n) / d.Seconds(), nil
}

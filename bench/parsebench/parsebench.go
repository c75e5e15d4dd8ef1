package parsebench

import (
	"fmt"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/tsd-db/tsd/bench/gen"
)

// Parser parses one request body and returns the number of points in it.
// A Parser may keep state between calls but is used by one goroutine.
type Parser func(body []byte) (int, error)

// Bodies encodes at most maxPoints points of cfg in format f, batch points a
// body, and returns the bodies and the number of points they hold.
func Bodies(cfg gen.Config, f gen.Format, batch, maxPoints int) ([][]byte, int, error) {
	g, err := gen.New(cfg)
	if err != nil {
		return nil, 0, err
	}
	e := gen.NewEncoder(g, f)
	var bodies [][]byte
	total := 0
	for total < maxPoints {
		body, n, err := e.AppendBatch(nil, min(batch, maxPoints-total))
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			break
		}
		bodies = append(bodies, body)
		total += n
	}
	return bodies, total, nil
}

// Rate parses every body with p and returns points per second. It fails if
// p does not count exactly points points.
func Rate(bodies [][]byte, points int, p Parser) (float64, error) {
	n := 0
	start := time.Now()
	for i, b := range bodies {
		k, err := p(b)
		if err != nil {
			return 0, fmt.Errorf("body %d: %w", i, err)
		}
		n += k
	}
	el := time.Since(start)
	if n != points {
		return 0, fmt.Errorf("parser counted %d points, want %d", n, points)
	}
	return float64(n) / el.Seconds(), nil
}

// Influx is the Influx peer: line-protocol/v2's decoder reading the
// measurement, every tag, every field value and the timestamp. Each field
// counts as one point.
func Influx(body []byte) (int, error) {
	dec := lineprotocol.NewDecoderWithBytes(body)
	n := 0
	for dec.Next() {
		if _, err := dec.Measurement(); err != nil {
			return n, err
		}
		for {
			k, _, err := dec.NextTag()
			if err != nil {
				return n, err
			}
			if k == nil {
				break
			}
		}
		for {
			k, v, err := dec.NextField()
			if err != nil {
				return n, err
			}
			if k == nil {
				break
			}
			_ = v.Interface()
			n++
		}
		if _, err := dec.Time(lineprotocol.Nanosecond, time.Time{}); err != nil {
			return n, err
		}
	}
	return n, dec.Err()
}

// RemoteWrite is the remote_write peer as Prometheus's receiver does it:
// snappy block decode into a reused buffer, then prompb.WriteRequest.Unmarshal
// into a fresh request. Each sample counts as one point.
type RemoteWrite struct {
	buf []byte
}

// Parse decodes one request body.
func (r *RemoteWrite) Parse(body []byte) (int, error) {
	n, err := snappy.DecodedLen(body)
	if err != nil {
		return 0, fmt.Errorf("snappy: %w", err)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	raw, err := snappy.Decode(r.buf[:n], body)
	if err != nil {
		return 0, fmt.Errorf("snappy: %w", err)
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(raw); err != nil {
		return 0, fmt.Errorf("prompb: %w", err)
	}
	k := 0
	for i := range req.Timeseries {
		k += len(req.Timeseries[i].Samples)
	}
	return k, nil
}

package gen

import "fmt"

// Format is a wire format tsd ingests.
type Format uint8

const (
	// FormatTelnet is OpenTSDB telnet "put" lines.
	FormatTelnet Format = iota
	// FormatJSON is an OpenTSDB /api/put JSON array.
	FormatJSON
	// FormatInflux is Influx line protocol, one line per host and instant.
	FormatInflux
	// FormatRemoteWrite is a snappy-compressed Prometheus remote_write 1.0
	// request.
	FormatRemoteWrite
)

var formatNames = [...]string{"telnet", "json", "influx", "remotewrite"}

// String returns the format's flag name.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// ParseFormat parses "telnet", "json", "influx" or "remotewrite".
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("gen: unknown format %q (want telnet, json, influx or remotewrite)", s)
}

// DefaultRemoteWriteSeries is the series count of a remote_write request when
// a batch size is not given: Prometheus's shards send 500 to 2,000.
const DefaultRemoteWriteSeries = 1000

// Encoder cuts a generator's points into request bodies of one format.
// Not safe for concurrent use.
type Encoder struct {
	g   *Gen
	f   Format
	pts []Point
	rw  *RemoteWriter
}

// NewEncoder returns an encoder drawing points from g.
func NewEncoder(g *Gen, f Format) *Encoder {
	e := &Encoder{g: g, f: f}
	if f == FormatRemoteWrite {
		e.rw = g.NewRemoteWriter()
	}
	return e
}

// batchSize adjusts n to the format: whole Influx lines, and at most one
// sample per series in a remote_write request.
func (e *Encoder) batchSize(n int) int {
	m := len(e.g.metrics)
	switch e.f {
	case FormatInflux:
		return max(n/m, 1) * m
	case FormatRemoteWrite:
		if n <= 0 {
			n = DefaultRemoteWriteSeries
		}
		return min(n, e.g.NumSeries())
	}
	return max(n, 1)
}

// AppendBatch draws about n points and appends them to dst as one request
// body: n telnet lines, one JSON array, n/metrics Influx lines (rounded to
// whole lines) or one remote_write request (at most one sample per series).
// It returns the number of points written, 0 once the dataset is exhausted.
func (e *Encoder) AppendBatch(dst []byte, n int) ([]byte, int, error) {
	n = e.batchSize(n)
	if cap(e.pts) < n {
		e.pts = make([]Point, n)
	}
	pts := e.pts[:n]
	k := 0
	for k < n && e.g.Next(&pts[k]) {
		k++
	}
	if k == 0 {
		return dst, 0, nil
	}
	pts = pts[:k]
	switch e.f {
	case FormatTelnet:
		for i := range pts {
			dst = e.g.AppendPut(dst, &pts[i])
		}
	case FormatJSON:
		dst = e.g.AppendJSONArray(dst, pts)
	case FormatInflux:
		m := len(e.g.metrics)
		for i := 0; i+m <= len(pts); i += m {
			dst = e.g.AppendInflux(dst, pts[i:i+m])
		}
	case FormatRemoteWrite:
		var err error
		if dst, err = e.rw.AppendRequest(dst, pts); err != nil {
			return dst, 0, err
		}
	default:
		return dst, 0, fmt.Errorf("gen: unknown format %d", e.f)
	}
	return dst, k, nil
}

// Bodies encodes at most maxPoints points of cfg in format f, batch points
// a body, and returns the bodies and how many points they hold: the
// pre-encoded requests parser tests and benchmarks feed their decoders.
func Bodies(cfg Config, f Format, batch, maxPoints int) ([][]byte, int, error) {
	g, err := New(cfg)
	if err != nil {
		return nil, 0, err
	}
	e := NewEncoder(g, f)
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

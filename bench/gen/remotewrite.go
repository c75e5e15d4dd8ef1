package gen

import (
	"fmt"
	"sort"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// RemoteWriter builds Prometheus remote_write 1.0 requests from points: a
// prompb.WriteRequest with one TimeSeries per point (labels __name__ and the
// ten tags, sorted by name as Prometheus requires), protobuf encoded and
// snappy block compressed. It reuses its request and buffers, so steady state
// allocates nothing. Not safe for concurrent use.
type RemoteWriter struct {
	g     *Gen
	order [len(TagKeys)]int // TagKeys indexes sorted by key
	req   prompb.WriteRequest
	raw   []byte
}

// NewRemoteWriter returns a writer for g's dataset.
func (g *Gen) NewRemoteWriter() *RemoteWriter {
	w := &RemoteWriter{g: g}
	for i := range w.order {
		w.order[i] = i
	}
	sort.Slice(w.order[:], func(a, b int) bool { return TagKeys[w.order[a]] < TagKeys[w.order[b]] })
	return w
}

// Build fills the writer's request with pts, one sample each, and returns it.
// The request is valid until the next call.
func (w *RemoteWriter) Build(pts []Point) *prompb.WriteRequest {
	ts := w.req.Timeseries[:0]
	for i := range pts {
		if len(ts) < cap(ts) {
			ts = ts[:len(ts)+1]
		} else {
			ts = append(ts, prompb.TimeSeries{})
		}
		w.fill(&ts[len(ts)-1], &pts[i])
	}
	w.req.Timeseries = ts
	return &w.req
}

func (w *RemoteWriter) fill(s *prompb.TimeSeries, p *Point) {
	h := &w.g.hosts[p.Host]
	ls := append(s.Labels[:0], prompb.Label{Name: "__name__", Value: w.g.metrics[p.Metric].Name})
	for _, i := range w.order {
		ls = append(ls, prompb.Label{Name: TagKeys[i], Value: h.Tags[i]})
	}
	s.Labels = ls
	s.Samples = append(s.Samples[:0], prompb.Sample{Value: p.Float, Timestamp: p.T})
}

// AppendRequest appends the snappy-compressed encoding of Build(pts) to dst.
func (w *RemoteWriter) AppendRequest(dst []byte, pts []Point) ([]byte, error) {
	req := w.Build(pts)
	n := req.Size()
	if cap(w.raw) < n {
		w.raw = make([]byte, n)
	}
	m, err := req.MarshalToSizedBuffer(w.raw[:n])
	if err != nil {
		return dst, fmt.Errorf("gen: marshal remote write request: %w", err)
	}
	return appendSnappy(dst, w.raw[:m]), nil
}

// appendSnappy appends the snappy block encoding of src to dst.
func appendSnappy(dst, src []byte) []byte {
	max := snappy.MaxEncodedLen(len(src))
	if cap(dst)-len(dst) < max {
		grown := make([]byte, len(dst), len(dst)+max)
		copy(grown, dst)
		dst = grown
	}
	enc := snappy.Encode(dst[len(dst):len(dst)+max], src)
	return dst[:len(dst)+len(enc)]
}

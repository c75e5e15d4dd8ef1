package promapi

import (
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// BenchmarkAppendMatrix encodes a range answer of 10 series by 1,000
// steps, the shape of a Grafana panel.
func BenchmarkAppendMatrix(b *testing.B) {
	m := make(promql.Matrix, 10)
	for i := range m {
		m[i].Metric = labels.FromStrings("__name__", "cpu_usage", "host", "web0"+string(rune('0'+i)), "dc", "east")
		for j := range 1000 {
			m[i].Floats = append(m[i].Floats, promql.FPoint{T: 1_700_000_000_000 + int64(j)*15_000, F: float64(j) * 1.25})
		}
	}
	res := promql.Result{Value: m}
	buf := appendQueryData(nil, res, nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = appendQueryData(buf[:0], res, nil)
	}
}

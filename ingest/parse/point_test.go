package parse

import (
	"math"
	"testing"

	"github.com/tsd-db/tsd/series"
)

func TestPointStringCloneReset(t *testing.T) {
	buf := []byte("metrichostweb01")
	p := Point{Metric: buf[:6], Value: series.Float32Point(1000, 42.5)}
	p.AddTag(buf[6:10], buf[10:])
	if got := p.String(); got != "metric{host=web01} 1000 42.5f32" {
		t.Fatalf("got %s", got)
	}
	c := p.Clone()
	copy(buf, "XXXXXXXXXXXXXXX")
	if got := c.String(); got != "metric{host=web01} 1000 42.5f32" {
		t.Fatalf("clone aliases its source: %s", got)
	}
	tags := cap(p.Tags)
	p.Reset()
	if p.Metric != nil || len(p.Tags) != 0 || cap(p.Tags) != tags || p.Value != (series.Point{}) {
		t.Fatalf("reset: %+v", p)
	}
	for _, tc := range []struct {
		v    series.Point
		want string
	}{
		{series.IntPoint(0, -7), "-7i"},
		{series.Float64Point(0, 0.1), "0.1f64"},
		{series.Float64Point(0, math.Float64frombits(series.StaleNaN)), "NaNf64"},
	} {
		if got := string(AppendValue(nil, tc.v)); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}

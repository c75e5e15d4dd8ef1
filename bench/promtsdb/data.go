package promtsdb

import (
	"github.com/prometheus/prometheus/model/labels"

	"github.com/tsd-db/tsd/bench/gen"
)

// Data is a dataset materialised for appending: labels per series and the
// values in the generator's order (time, then series).
type Data struct {
	// Labels holds each series' label set (__name__ and the ten tags).
	Labels []labels.Labels
	// Start is the first timestamp in ms.
	Start int64
	// Step is the interval in ms.
	Step int64
	// Values holds every value, time-major: Values[i] belongs to series
	// i%len(Labels) at Start+i/len(Labels)*Step.
	Values []float64
}

// Generate materialises cfg's dataset.
func Generate(cfg gen.Config) (*Data, error) {
	g, err := gen.New(cfg)
	if err != nil {
		return nil, err
	}
	c := g.Config()
	d := &Data{
		Labels: seriesLabels(g),
		Start:  c.Start.UnixMilli(),
		Step:   c.Interval.Milliseconds(),
		Values: make([]float64, g.NumPoints()),
	}
	var p gen.Point
	for i := 0; g.Next(&p); i++ {
		d.Values[i] = p.Float
	}
	return d, nil
}

func seriesLabels(g *gen.Gen) []labels.Labels {
	ls := make([]labels.Labels, 0, g.NumSeries())
	kv := make([]string, 0, 2+2*len(gen.TagKeys))
	for _, h := range g.Hosts() {
		for _, m := range g.Metrics() {
			kv = append(kv[:0], labels.MetricName, m.Name)
			for i, k := range gen.TagKeys {
				kv = append(kv, k, h.Tags[i])
			}
			ls = append(ls, labels.FromStrings(kv...))
		}
	}
	return ls
}

// NumSamples returns the number of samples.
func (d *Data) NumSamples() int { return len(d.Values) }

// MaxTime returns the last timestamp in ms.
func (d *Data) MaxTime() int64 {
	return d.Start + int64(len(d.Values)/len(d.Labels)-1)*d.Step
}

package promrw

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/prompb"
)

// transcript decodes raw (1.0) and writes what a consumer sees: each
// point with its names, each refusal, the error and the stats. lazy
// decodes with LazyNames as a consumer that knows every Key it read
// names for: it calls ParseNames only for a Key new to it and takes the
// names it read then.
func transcript(t testing.TB, raw []byte, lazy bool) string {
	d := newDecoder(t, &Options{MaxTags: 4, LazyNames: lazy})
	d.Reset(raw, V1)
	var b strings.Builder
	known := map[string]string{}
	for d.Next() {
		if err := d.Bad(); err != nil {
			fmt.Fprintf(&b, "refused: %v\n", err)
			continue
		}
		p := d.Point()
		names, ok := "", false
		if p.Key != nil {
			names, ok = known[string(p.Key)]
		}
		if !ok {
			if err := d.ParseNames(); err != nil {
				if d.Err() != nil {
					break
				}
				fmt.Fprintf(&b, "refused: %v\n", err)
				continue
			}
			names = fmt.Sprintf("%s%v", p.Metric, p.Tags)
			if p.Key != nil {
				known[string(p.Key)] = names
			}
		}
		fmt.Fprintf(&b, "%s %d %x\n", names, p.Value.T, p.Value.Bits)
	}
	fmt.Fprintf(&b, "err %v\nstats %+v\n", d.Err(), d.Stats())
	return b.String()
}

// TestLazyNamesAsEager: with LazyNames a consumer sees the points,
// refusals, error and counts it sees without, for good, bad and
// malformed series, repeated series, and labels apart.
func TestLazyNamesAsEager(t *testing.T) {
	good := prompb.TimeSeries{Labels: lbls("__name__", "up", "job", "a"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}, {Value: 2, Timestamp: 3}}}
	bodies := map[string][]byte{
		"repeated": marshal(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{good, good,
			{Labels: lbls("__name__", "up", "job", "b"), Samples: []prompb.Sample{{Value: 3, Timestamp: 4}}}, good}}),
		"bad names": marshal(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{good,
			{Labels: lbls("job", "b"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}, {Value: 1, Timestamp: 3}}},
			{Labels: lbls("__name__", "a b", "job", "b"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}}},
			{Labels: lbls("__name__", "x", "job", "b", "job", "c"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}}},
			{Labels: lbls("__name__", "x", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}}},
			good}}),
		"before 1970": marshal(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
			{Labels: lbls("__name__", "up"), Samples: []prompb.Sample{{Value: 1, Timestamp: -2}, {Value: 1, Timestamp: 5}}},
			{Labels: lbls("job", "nameless"), Samples: []prompb.Sample{{Value: 1, Timestamp: -2}, {Value: 1, Timestamp: 5}}},
			good}}),
		"histograms only": marshal(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
			{Labels: lbls("__name__", "h"), Histograms: []prompb.Histogram{{Timestamp: 1}}}, good}}),
	}
	// Labels apart: a sample between two labels.
	apart := []byte{0x0a, 0, // TimeSeries, length set below
		0x0a, 0x0e, 0x0a, 0x08, '_', '_', 'n', 'a', 'm', 'e', '_', '_', 0x12, 0x02, 'u', 'p',
		0x12, 0x0b, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x10, 0x07,
		0x0a, 0x08, 0x0a, 0x01, 'k', 0x12, 0x03, 'v', 'a', 'l'}
	apart[1] = byte(len(apart) - 2)
	bodies["labels apart"] = append(apart, apart...)
	// Malformed: a label whose message is cut.
	cut := []byte{0x0a, 0, 0x0a, 0x04, 0x0a, 0x08, 'x', 'y', 0x12, 0x0b, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x10, 0x07}
	cut[1] = byte(len(cut) - 2)
	bodies["malformed"] = append(marshal(t, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{good}}), cut...)
	for name, raw := range bodies {
		eager, lazy := transcript(t, raw, false), transcript(t, raw, true)
		if eager != lazy {
			t.Errorf("%s: eager\n%s\nlazy\n%s", name, eager, lazy)
		}
	}
}

// FuzzLazyNames: on any 1.0 body, LazyNames changes nothing a consumer
// sees.
func FuzzLazyNames(f *testing.F) {
	f.Add(marshal(f, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{
		{Labels: lbls("__name__", "up", "job", "a"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}}},
		{Labels: lbls("__name__", "up", "job", "a"), Samples: []prompb.Sample{{Value: 1, Timestamp: -2}}},
		{Labels: lbls("job", "b"), Samples: []prompb.Sample{{Value: 1, Timestamp: 2}}},
	}}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if eager, lazy := transcript(t, raw, false), transcript(t, raw, true); eager != lazy {
			t.Fatalf("eager\n%s\nlazy\n%s", eager, lazy)
		}
	})
}

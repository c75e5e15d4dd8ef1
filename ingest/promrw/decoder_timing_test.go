package promrw

import (
	"testing"

	"github.com/prometheus/prometheus/prompb"

	"github.com/klauspost/compress/snappy"

	"github.com/tsd-db/tsd/bench/gen"
)

// BenchmarkDecode decodes the bench remote_write requests (1,000 series of
// 11 labels and one sample each) in the same run with tsd's decoder and
// Prometheus's prompb: "snappy" includes snappy decoding into a reused
// buffer on both sides (the receiver's whole job), "proto" only the
// protobuf decoding of the already decoded bytes. One op is one request;
// samples/cpu-s counts per CPU second of the process.
func BenchmarkDecode(b *testing.B) {
	bodies, raws, n := benchRaw(b, gen.Config{Values: gen.ValuesFloat}, 50_000)
	d := newDecoder(b, nil)
	var buf, peerBuf []byte
	tsdSnappy := func(body []byte) (int, error) {
		var err error
		if buf, err = Decompress(buf, body, 0); err != nil {
			return 0, err
		}
		return tsdProto(d, buf)
	}
	peerProto := func(raw []byte) (int, error) {
		var req prompb.WriteRequest
		if err := req.Unmarshal(raw); err != nil {
			return 0, err
		}
		k := 0
		for i := range req.Timeseries {
			k += len(req.Timeseries[i].Samples)
		}
		return k, nil
	}
	peerSnappy := func(body []byte) (int, error) {
		n, err := snappy.DecodedLen(body)
		if err != nil {
			return 0, err
		}
		if cap(peerBuf) < n {
			peerBuf = make([]byte, n)
		}
		raw, err := snappy.Decode(peerBuf[:n], body)
		if err != nil {
			return 0, err
		}
		return peerProto(raw)
	}
	tsdRaw := func(raw []byte) (int, error) { return tsdProto(d, raw) }
	gen.BenchParsers(b, "samples",
		gen.ParseCase{Name: "snappy/tsd", Parse: tsdSnappy, Bodies: bodies, Points: n},
		gen.ParseCase{Name: "snappy/prompb", Parse: peerSnappy, Bodies: bodies, Points: n},
		gen.ParseCase{Name: "proto/tsd", Parse: tsdRaw, Bodies: raws, Points: n},
		gen.ParseCase{Name: "proto/prompb", Parse: peerProto, Bodies: raws, Points: n})
}

func tsdProto(d *Decoder, raw []byte) (int, error) {
	d.Reset(raw, V1)
	k := 0
	for d.Next() {
		if se := d.SeriesError(); se != nil {
			return k, se
		}
		k++
	}
	return k, d.Err()
}

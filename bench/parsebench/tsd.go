package parsebench

import (
	"fmt"

	"github.com/tsd-db/tsd/ingest/influx"
	"github.com/tsd-db/tsd/ingest/promrw"
)

// InfluxTSD is tsd's Influx side: ingest/influx's Decoder yielding every
// point (metric, tags, typed value, time). A bad line is an error. Reuse
// one per goroutine: it allocates nothing in steady state.
type InfluxTSD struct {
	d *influx.Decoder
}

// NewInfluxTSD returns tsd's Influx parser with default options.
func NewInfluxTSD() *InfluxTSD {
	d, err := influx.NewDecoder(nil)
	if err != nil {
		panic(err) // default options are valid
	}
	return &InfluxTSD{d: d}
}

// Parse decodes one body (nanosecond timestamps, as Telegraf sends).
func (p *InfluxTSD) Parse(body []byte) (int, error) {
	p.d.Reset(body, influx.Nanosecond, 0)
	n := 0
	for p.d.Next() {
		if le := p.d.LineError(); le != nil {
			return n, le
		}
		n++
	}
	return n, p.d.Err()
}

// RemoteWriteTSD is tsd's remote_write side: snappy decoding into a reused
// buffer (promrw.Decompress) and ingest/promrw's Decoder yielding every
// sample (metric, tags, value bits, time). A bad series is an error.
type RemoteWriteTSD struct {
	buf []byte
	d   *promrw.Decoder
}

// NewRemoteWriteTSD returns tsd's remote_write 1.0 decoder.
func NewRemoteWriteTSD() *RemoteWriteTSD {
	d, err := promrw.NewDecoder(nil)
	if err != nil {
		panic(err) // default options are valid
	}
	return &RemoteWriteTSD{d: d}
}

// Parse decodes one snappy-compressed request body.
func (p *RemoteWriteTSD) Parse(body []byte) (int, error) {
	var err error
	if p.buf, err = promrw.Decompress(p.buf, body, 0); err != nil {
		return 0, err
	}
	p.d.Reset(p.buf, promrw.V1)
	n := 0
	for p.d.Next() {
		if se := p.d.SeriesError(); se != nil {
			return n, fmt.Errorf("promrw: %w", se)
		}
		n++
	}
	return n, p.d.Err()
}

package service

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/ingest/influx"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/telnet"
	"github.com/tsd-db/tsd/internal/cputime"
)

// sessionBodies returns the devops int dataset (100 hosts, 6 h: 2.16 M
// points) in format f, batch points a body. One op of the session
// benchmarks is one body, in time order; past the last body they start
// over, rewriting points, so keep -benchtime under len(bodies)x.
func sessionBodies(b *testing.B, f gen.Format, batch int) ([][]byte, int) {
	bodies, n, err := gen.Bodies(gen.Config{Span: 6 * time.Hour}, f, batch, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	return bodies, n / len(bodies)
}

// BenchmarkSessionInflux decodes Influx bodies of 1,000 lines (10 fields
// each) and adds every point through one Session, committing per body as
// the /write handler does: the server's per-point cost without HTTP.
func BenchmarkSessionInflux(b *testing.B) {
	bodies, per := sessionBodies(b, gen.FormatInflux, 10_000)
	st := newStack(b, nil)
	dec, _ := influx.NewDecoder(nil)
	ctx := context.Background()
	add := func(body []byte) {
		sess := st.w.Session(Influx)
		dec.Reset(body, influx.Nanosecond, 0)
		for dec.Next() {
			if le := dec.LineError(); le != nil {
				b.Fatal(le)
			}
			if err := sess.Add(ctx, dec.Point()); err != nil {
				b.Fatal(err)
			}
		}
		if err := sess.Commit(false); err != nil {
			b.Fatal(err)
		}
		sess.Release()
	}
	add(bodies[0]) // every series created: the rest is steady state
	b.ReportAllocs()
	cpu, i := cputime.Process(), 1
	for b.Loop() {
		add(bodies[i%len(bodies)])
		i++
	}
	reportPoints(b, per, cpu)
}

// BenchmarkSessionTelnet parses put lines (devops, 10 tags a line) and
// adds them through one Session, committing every 1,000 lines.
func BenchmarkSessionTelnet(b *testing.B) {
	bodies, per := sessionBodies(b, gen.FormatTelnet, 1_000)
	st := newStack(b, nil)
	p, _ := telnet.NewParser(nil)
	sess := st.w.Session(Telnet)
	defer sess.Release()
	var pt parse.Point
	ctx := context.Background()
	add := func(body []byte) {
		for len(body) > 0 {
			n := bytes.IndexByte(body, '\n')
			if n < 0 {
				n = len(body)
			}
			if err := p.ParsePut(body[:n], &pt); err != nil {
				b.Fatal(err)
			}
			if err := sess.Add(ctx, &pt); err != nil {
				b.Fatal(err)
			}
			body = body[min(n+1, len(body)):]
		}
		if err := sess.Commit(false); err != nil {
			b.Fatal(err)
		}
	}
	for _, body := range bodies[:10] { // every series created
		add(body)
	}
	b.ReportAllocs()
	cpu, i := cputime.Process(), 10
	for b.Loop() {
		add(bodies[i%len(bodies)])
		i++
	}
	reportPoints(b, per, cpu)
}

func reportPoints(b *testing.B, per int, cpu time.Duration) {
	pts := float64(b.N) * float64(per)
	b.ReportMetric(pts/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(pts/(cputime.Process()-cpu).Seconds(), "points/cpu-s")
}

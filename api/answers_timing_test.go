package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/tsd-db/tsd/api/promapi"
	"github.com/tsd-db/tsd/internal/cputime"
	"github.com/tsd-db/tsd/query/opentsdb"
	tsdpromql "github.com/tsd-db/tsd/query/promql"
	"github.com/tsd-db/tsd/query/read"
)

// BenchmarkQueryHTTP times OpenTSDB and Prometheus queries through the
// whole server over loopback, one keep-alive connection, the answer read
// whole: small answers (2 series x 10 min, about 1 KB: set whole) and
// large ones (200 series x 1 h, about 1.4 MB: streamed), plain and
// gzipped. cpu-ns/op is the process's CPU (client and server) a query.
func BenchmarkQueryHTTP(b *testing.B) {
	st := newReadStackWith(b, read.Options{})
	eng, err := opentsdb.New(&opentsdb.Options{Reader: st.r, UIDs: st.u, Index: st.ix, Logger: quietLog()})
	if err != nil {
		b.Fatal(err)
	}
	pq, err := tsdpromql.New(&tsdpromql.Options{Reader: st.r, UIDs: st.u, Index: st.ix})
	if err != nil {
		b.Fatal(err)
	}
	base := serveBench(b, Options{Query: eng, PromQL: promapi.Options{Queryable: pq}})
	loadHosts(b, st.w, "big", 200, 3600)
	loadHosts(b, st.w, "small", 2, 600)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	for _, c := range []struct{ name, path string }{
		{"opentsdb/small", fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:small%%7Bhost=*%%7D", bigT0, bigT0+599)},
		{"opentsdb/large", fmt.Sprintf("/api/query?start=%d&end=%d&m=sum:big%%7Bhost=*%%7D", bigT0, bigT0+3599)},
		{"promql/small", fmt.Sprintf("/api/v1/query_range?query=small&start=%d&end=%d&step=60", bigT0, bigT0+599)},
		{"promql/large", fmt.Sprintf("/api/v1/query_range?query=big&start=%d&end=%d&step=10", bigT0, bigT0+3599)},
	} {
		for _, gz := range []bool{false, true} {
			name := c.name
			if gz {
				name += "/gzip"
			}
			b.Run(name, func(b *testing.B) {
				req, err := http.NewRequest(http.MethodGet, base+c.path, nil)
				if err != nil {
					b.Fatal(err)
				}
				if gz {
					req.Header.Set("Accept-Encoding", "gzip")
				}
				var n int64
				b.ReportAllocs()
				cpu := cputime.Process()
				for b.Loop() {
					if n, err = getAll(client, req); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
				b.SetBytes(n)
			})
		}
	}
}

// getAll sends req and reads the answer whole, returning its length.
func getAll(c *http.Client, req *http.Request) (int64, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return n, err
}

// serveBench runs a Server on an ephemeral 127.0.0.1 port until the
// benchmark ends and returns its base URL.
func serveBench(b *testing.B, opts Options) string {
	opts.Addr, opts.Logger = "127.0.0.1:0", quietLog()
	s, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := s.Listen()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	b.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			b.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

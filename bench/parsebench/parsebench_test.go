package parsebench

import (
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
)

func TestPeersCountEveryPoint(t *testing.T) {
	cfg := gen.Config{Hosts: 5, Span: 10 * time.Minute, Values: gen.ValuesFloat}
	for _, tc := range []struct {
		f gen.Format
		p Parser
	}{
		{gen.FormatInflux, Influx},
		{gen.FormatRemoteWrite, new(RemoteWrite).Parse},
		{gen.FormatInflux, NewInfluxTSD().Parse},
		{gen.FormatRemoteWrite, NewRemoteWriteTSD().Parse},
	} {
		bodies, n, err := Bodies(cfg, tc.f, 40, 2000)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2000 {
			t.Fatalf("%s: %d points", tc.f, n)
		}
		if rate, err := Rate(bodies, n, tc.p); err != nil || rate <= 0 {
			t.Fatalf("%s: rate %v, %v", tc.f, rate, err)
		}
		// A wrong expected count must fail.
		if _, err := Rate(bodies, n+1, tc.p); err == nil {
			t.Fatalf("%s: Rate accepted a wrong count", tc.f)
		}
	}
}

func TestPeersRejectGarbage(t *testing.T) {
	if _, err := Influx([]byte("cpu,host=a usage=notanumber 1\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("influx garbage: %v", err)
	}
	if _, err := new(RemoteWrite).Parse([]byte("not snappy")); err == nil {
		t.Fatal("remote write garbage accepted")
	}
	if _, err := NewInfluxTSD().Parse([]byte("cpu,host=a usage=notanumber 1\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("tsd influx garbage: %v", err)
	}
	if _, err := NewRemoteWriteTSD().Parse([]byte("not snappy")); err == nil {
		t.Fatal("tsd remote write garbage accepted")
	}
}

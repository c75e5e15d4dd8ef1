package textimport

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkReader reads devops-shaped lines (ten tags, as bench/gen's).
func BenchmarkReader(b *testing.B) {
	var in bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&in, "cpu_usage_user %d %d hostname=host_%d region=eu-west-1 datacenter=eu-west-1a rack=%d os=Ubuntu16.04LTS arch=x64 team=SF service=%d service_version=1 service_environment=production\n",
			1767225600+i*10, i%100, i%100, i%50, i%20)
	}
	b.SetBytes(int64(in.Len()))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(in.Bytes()), nil)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for r.Next() {
			if r.Bad() != nil {
				b.Fatal(r.Bad())
			}
			n++
		}
		if n != 10000 {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "lines/s")
}

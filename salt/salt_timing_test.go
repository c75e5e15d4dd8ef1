package salt

import "testing"

func BenchmarkBucket(b *testing.B) {
	s := Default()
	tsuid := unhex(b, "000001000001000001000002000007")
	b.ReportAllocs()
	b.SetBytes(int64(len(tsuid)))
	var sink int
	for b.Loop() {
		sink += s.Bucket(tsuid)
	}
	_ = sink
}

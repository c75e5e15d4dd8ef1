package annotation

import "testing"

var sinkBytes []byte

// BenchmarkDecode is the query path's cost per annotation cell.
func BenchmarkDecode(b *testing.B) {
	v := []byte(`{"tsuid":"000001000001000001","startTime":1388450562,"endTime":1419984000,` +
		`"description":"Hello!","notes":"My Notes","custom":{"owner":"ops"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		a, err := Decode(v)
		if err != nil {
			b.Fatal(err)
		}
		sinkBytes = AppendJSON(sinkBytes[:0], &a)
	}
}

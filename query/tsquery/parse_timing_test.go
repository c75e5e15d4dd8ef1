package tsquery

import "testing"

var sinkQuery *TSQuery

func BenchmarkParseM(b *testing.B) {
	const m = "sum:rate{counter,65535,1000}:1m-avg:sys.cpu.user{host=web01|web02,dc=*}{env=prod}"
	b.SetBytes(int64(len(m)))
	b.ReportAllocs()
	for b.Loop() {
		sq, err := ParseM(m)
		if err != nil {
			b.Fatal(err)
		}
		sinkQuery = &TSQuery{Queries: []*SubQuery{sq}}
	}
}

// BenchmarkParsePOST parses and validates the old Grafana frontend's body.
func BenchmarkParsePOST(b *testing.B) {
	body := []byte(`{"start":1699990000000,"queries":[{"metric":"sys.cpu.user","aggregator":"avg",
		"downsample":"1m-avg","tags":{"host":"web01|web02","dc":"*"}}],"msResolution":false,
		"globalAnnotations":true,"showQuery":true}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		q, err := ParsePOST(body)
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Validate(ValidateOptions{Now: now}); err != nil {
			b.Fatal(err)
		}
		sinkQuery = q
	}
}

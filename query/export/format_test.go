package export

import (
	"bytes"
	"math"
	"testing"

	"github.com/tsd-db/tsd/series"
)

func TestSeriesLines(t *testing.T) {
	tags := []Tag{{"host", "web 01"}, {"k=1", `a"b\c`}}
	pts := []series.Point{series.IntPoint(1356998400000, -7), series.Float32Point(1356998400500, 0.1),
		series.Float64Point(1356998401000, 3), series.Float64Point(1356998402000, math.NaN())}
	for _, c := range []struct {
		f    Format
		want string
		skip int
	}{
		{OpenTSDB, `a\ b 1356998400 -7 host=web\ 01 k\=1=a"b\\c` + "\n" +
			`a\ b 1356998400500 0.10000000149011612 host=web\ 01 k\=1=a"b\\c` + "\n" +
			`a\ b 1356998401 3.0 host=web\ 01 k\=1=a"b\\c` + "\n" +
			`a\ b 1356998402 NaN host=web\ 01 k\=1=a"b\\c` + "\n", 0},
		{Prometheus, `{"a b",host="web 01","k=1"="a\"b\\c"} -7 1356998400000` + "\n" +
			`{"a b",host="web 01","k=1"="a\"b\\c"} 0.10000000149011612 1356998400500` + "\n" +
			`{"a b",host="web 01","k=1"="a\"b\\c"} 3.0 1356998401000` + "\n" +
			`{"a b",host="web 01","k=1"="a\"b\\c"} NaN 1356998402000` + "\n", 0},
		{Influx, `a\ b,host=web\ 01,k\=1=a"b\c value=-7i 1356998400000000000` + "\n" +
			`a\ b,host=web\ 01,k\=1=a"b\c value=0.10000000149011612 1356998400500000000` + "\n" +
			`a\ b,host=web\ 01,k\=1=a"b\c value=3 1356998401000000000` + "\n", 1},
	} {
		var b bytes.Buffer
		n, skipped, err := WriteSeries(&b, c.f, "a b", tags, pts, nil)
		if err != nil || b.String() != c.want || skipped != c.skip || n != len(pts)-c.skip {
			t.Errorf("%s: %d written, %d skipped, %v\n%s\nwant\n%s", c.f, n, skipped, err, b.String(), c.want)
		}
	}
	if got := string(AppendHeader(nil, Prometheus, "up")); got != "# TYPE up untyped\n" {
		t.Errorf("header %q", got)
	}
	if got := string(AppendHeader(nil, OpenTSDB, "up")); got != "" {
		t.Errorf("opentsdb header %q", got)
	}
}

package last

import (
	"sort"
	"strconv"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/rowkey"
)

// AppendJSON appends the points as OpenTSDB's /api/query/last answer: an
// array of {"metric","timestamp","value","tags","tsuid"} objects, metric
// and tags only when resolved, the value a string, the TSUID in uppercase
// hex.
func AppendJSON(dst []byte, pts []Point) []byte {
	dst = append(dst, '[')
	for i := range pts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendPoint(dst, &pts[i])
	}
	return append(dst, ']')
}

// AppendPoint appends one element of AppendJSON's array, for a writer
// that writes the array in parts.
func AppendPoint(dst []byte, p *Point) []byte {
	dst = append(dst, '{')
	if p.Metric != "" {
		dst = append(dst, `"metric":`...)
		dst = jsonw.Jackson.AppendString(dst, p.Metric)
		dst = append(dst, ',')
	}
	dst = append(dst, `"timestamp":`...)
	dst = strconv.AppendInt(dst, p.T, 10)
	dst = append(dst, `,"value":`...)
	dst = jsonw.Jackson.AppendString(dst, FormatValue(p.Point))
	if p.Metric != "" {
		dst = append(dst, `,"tags":`...)
		dst = jsonw.AppendTags(jsonw.Jackson, dst, p.Tags)
	}
	dst = append(dst, `,"tsuid":"`...)
	dst = rowkey.AppendTSUIDHex(dst, []byte(p.TSUID))
	return append(dst, `"}`...)
}

func sortTags(tags []Tag) {
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
}

// javaDouble formats f as Java's Double.toString: the shortest digits that
// read back to f, plain between 10^-3 and 10^7 (with ".0" when whole),
// else computerized scientific notation ("1.0E7", "1.5E-4"); NaN and
// Infinity by name.
func javaDouble(f float64) string {
	var buf [32]byte
	return string(jsonw.AppendJavaDouble(buf[:0], f))
}

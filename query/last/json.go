package last

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/internal/jackson"
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
		dst = appendString(dst, p.Metric)
		dst = append(dst, ',')
	}
	dst = append(dst, `"timestamp":`...)
	dst = strconv.AppendInt(dst, p.T, 10)
	dst = append(dst, `,"value":`...)
	dst = appendString(dst, FormatValue(p.Point))
	if p.Metric != "" {
		dst = append(dst, `,"tags":{`...)
		for i, t := range p.Tags {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, t.Key)
			dst = append(dst, ':')
			dst = appendString(dst, t.Value)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"tsuid":"`...)
	dst = rowkey.AppendTSUIDHex(dst, []byte(p.TSUID))
	return append(dst, `"}`...)
}

// appendString appends s as a JSON string the way OpenTSDB's Jackson
// writer does (internal/jackson).
func appendString(dst []byte, s string) []byte { return jackson.AppendString(dst, s) }

func sortTags(tags []Tag) {
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
}

// javaDouble formats f as Java's Double.toString: the shortest digits that
// read back to f, plain between 10^-3 and 10^7 (with ".0" when whole),
// else computerized scientific notation ("1.0E7", "1.5E-4"); NaN and
// Infinity by name.
func javaDouble(f float64) string {
	switch abs := math.Abs(f); {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case abs == 0 || (abs >= 1e-3 && abs < 1e7):
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	sign := ""
	if exp[0] == '-' {
		sign = "-"
	}
	return mant + "E" + sign + strings.TrimLeft(exp[1:], "0")
}

package export

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tsd-db/tsd/series"
)

// Format is an output format.
type Format uint8

// The formats.
const (
	OpenTSDB Format = iota
	Prometheus
	Influx
)

// ParseFormat reads a format's name: opentsdb, prometheus or influx.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "opentsdb", "":
		return OpenTSDB, nil
	case "prometheus":
		return Prometheus, nil
	case "influx":
		return Influx, nil
	}
	return 0, fmt.Errorf("unknown format %q (want opentsdb, prometheus or influx)", s)
}

// String returns the format's name.
func (f Format) String() string {
	return [...]string{"opentsdb", "prometheus", "influx"}[f]
}

// Tag is one tag of a series, by name.
type Tag struct{ Key, Value string }

// AppendEscaped appends an OpenTSDB text name with its space, '=' and
// backslash escaped.
func AppendEscaped(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case ' ', '=', '\\':
			dst = append(dst, '\\', c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendTimestamp appends a point's time as the OpenTSDB text writes it.
func AppendTimestamp(dst []byte, v series.Point) []byte {
	if v.T%1000 == 0 && !v.Ms {
		return strconv.AppendInt(dst, v.T/1000, 10)
	}
	return strconv.AppendInt(dst, v.T, 10)
}

// AppendNumber appends a point's value: an integer as one, a float in Go's
// shortest form with a '.' or an exponent (NaN, +Inf, -Inf as such).
func AppendNumber(dst []byte, v series.Point) []byte {
	if v.Kind == series.Int {
		return strconv.AppendInt(dst, int64(v.Bits), 10)
	}
	f := v.Float()
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "+Inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-Inf"...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	if bytes.IndexAny(dst[start:], ".e") < 0 {
		dst = append(dst, ".0"...)
	}
	return dst
}

// seriesText is a series' fixed parts of a line: what comes before the
// value (or the time) and after it.
type seriesText struct {
	prefix []byte
	suffix []byte
}

// newSeriesText builds a series' line parts in format f.
func newSeriesText(f Format, metric string, tags []Tag) seriesText {
	var st seriesText
	switch f {
	case OpenTSDB:
		st.prefix = append(AppendEscaped(nil, metric), ' ')
		for _, t := range tags {
			st.suffix = append(st.suffix, ' ')
			st.suffix = AppendEscaped(st.suffix, t.Key)
			st.suffix = append(st.suffix, '=')
			st.suffix = AppendEscaped(st.suffix, t.Value)
		}
		st.suffix = append(st.suffix, '\n')
	case Prometheus:
		st.prefix = appendPromSeries(nil, metric, tags)
		st.prefix = append(st.prefix, ' ')
	case Influx:
		st.prefix = appendInfluxEscaped(nil, metric, ", ")
		for _, t := range tags {
			st.prefix = append(st.prefix, ',')
			st.prefix = appendInfluxEscaped(st.prefix, t.Key, ",= ")
			st.prefix = append(st.prefix, '=')
			st.prefix = appendInfluxEscaped(st.prefix, t.Value, ",= ")
		}
		st.prefix = append(st.prefix, " value="...)
	}
	return st
}

// appendLine appends one point's line; ok is false for a point the format
// cannot hold.
func (st *seriesText) appendLine(dst []byte, f Format, p series.Point) ([]byte, bool) {
	switch f {
	case OpenTSDB:
		dst = append(dst, st.prefix...)
		dst = AppendTimestamp(dst, p)
		dst = append(dst, ' ')
		dst = AppendNumber(dst, p)
		return append(dst, st.suffix...), true
	case Prometheus:
		dst = append(dst, st.prefix...)
		dst = AppendNumber(dst, p)
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, p.T, 10)
		return append(dst, '\n'), true
	default:
		if p.Kind != series.Int && (math.IsNaN(p.Float()) || math.IsInf(p.Float(), 0)) {
			return dst, false
		}
		dst = append(dst, st.prefix...)
		if p.Kind == series.Int {
			dst = strconv.AppendInt(dst, int64(p.Bits), 10)
			dst = append(dst, 'i')
		} else {
			dst = strconv.AppendFloat(dst, p.Float(), 'g', -1, 64)
		}
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, p.T*1e6, 10)
		return append(dst, '\n'), true
	}
}

// isPromName reports a legacy Prometheus metric (colon true) or label name.
func isPromName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (colon && c == ':') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// appendPromSeries appends name{labels}, quoting what is not a legacy name.
func appendPromSeries(dst []byte, metric string, tags []Tag) []byte {
	quoted := !isPromName(metric, true)
	if !quoted {
		dst = append(dst, metric...)
	}
	if len(tags) == 0 && !quoted {
		return dst
	}
	dst = append(dst, '{')
	if quoted {
		dst = appendPromString(dst, metric)
	}
	for i, t := range tags {
		if i > 0 || quoted {
			dst = append(dst, ',')
		}
		if isPromName(t.Key, false) {
			dst = append(dst, t.Key...)
		} else {
			dst = appendPromString(dst, t.Key)
		}
		dst = append(dst, '=')
		dst = appendPromString(dst, t.Value)
	}
	return append(dst, '}')
}

// appendPromString appends s in double quotes with \\, \" and \n escaped.
func appendPromString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			dst = append(dst, `\\`...)
		case '"':
			dst = append(dst, `\"`...)
		case '\n':
			dst = append(dst, `\n`...)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendInfluxEscaped appends s with each byte of special backslashed.
func appendInfluxEscaped(dst []byte, s, special string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if bytes.IndexByte([]byte(special), c) >= 0 {
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	return dst
}

// WriteSeries writes the points of one series (named, not read from a
// store: tsd export --url's answers) in format f, using buf as scratch. It
// returns the points written and skipped.
func WriteSeries(w io.Writer, f Format, metric string, tags []Tag, pts []series.Point, buf []byte) (written, skipped int, err error) {
	st := newSeriesText(f, metric, tags)
	b := buf[:0]
	for _, p := range pts {
		var ok bool
		if b, ok = st.appendLine(b, f, p); ok {
			written++
		} else {
			skipped++
		}
	}
	_, err = w.Write(b)
	return written, skipped, err
}

package gen

import (
	"strconv"
)

// The Append methods read only the dataset's fixed metric and host tables, so
// they are safe to call from several goroutines while one goroutine iterates.
// Names and tag values are plain ASCII ([A-Za-z0-9._-]), so no escaping is
// needed in any format.

// AppendPut appends p as an OpenTSDB telnet line,
// "put <metric> <ts> <value> <k=v>...\n", the timestamp in seconds when it is
// whole seconds, else in milliseconds.
func (g *Gen) AppendPut(dst []byte, p *Point) []byte {
	dst = append(dst, "put "...)
	dst = append(dst, g.metrics[p.Metric].Name...)
	dst = append(dst, ' ')
	dst = appendOpenTSDBTime(dst, p.T)
	dst = append(dst, ' ')
	dst = append(dst, p.Text...)
	h := &g.hosts[p.Host]
	for i, k := range TagKeys {
		dst = append(dst, ' ')
		dst = append(dst, k...)
		dst = append(dst, '=')
		dst = append(dst, h.Tags[i]...)
	}
	return append(dst, '\n')
}

func appendOpenTSDBTime(dst []byte, ms int64) []byte {
	if ms%1000 == 0 {
		return strconv.AppendInt(dst, ms/1000, 10)
	}
	return strconv.AppendInt(dst, ms, 10)
}

// AppendJSON appends p as one OpenTSDB /api/put object,
// {"metric":...,"timestamp":...,"value":...,"tags":{...}}, without a
// separator; AppendJSONArray writes whole request bodies.
func (g *Gen) AppendJSON(dst []byte, p *Point) []byte {
	dst = append(dst, `{"metric":"`...)
	dst = append(dst, g.metrics[p.Metric].Name...)
	dst = append(dst, `","timestamp":`...)
	dst = appendOpenTSDBTime(dst, p.T)
	dst = append(dst, `,"value":`...)
	dst = append(dst, p.Text...)
	dst = append(dst, `,"tags":{`...)
	h := &g.hosts[p.Host]
	for i, k := range TagKeys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, `":"`...)
		dst = append(dst, h.Tags[i]...)
		dst = append(dst, '"')
	}
	return append(dst, "}}"...)
}

// AppendJSONArray appends pts as one /api/put body, a JSON array.
func (g *Gen) AppendJSONArray(dst []byte, pts []Point) []byte {
	dst = append(dst, '[')
	for i := range pts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = g.AppendJSON(dst, &pts[i])
	}
	return append(dst, ']')
}

// AppendInflux appends one Influx line holding pts, which must be the points
// of one host at one instant, one per metric, in metric order (as Next yields
// them): "<measurement>,<tags> <field>=<v>,... <ns>\n". Integers carry the
// "i" suffix.
func (g *Gen) AppendInflux(dst []byte, pts []Point) []byte {
	dst = append(dst, g.measure...)
	h := &g.hosts[pts[0].Host]
	for i, k := range TagKeys {
		dst = append(dst, ',')
		dst = append(dst, k...)
		dst = append(dst, '=')
		dst = append(dst, h.Tags[i]...)
	}
	for i := range pts {
		p := &pts[i]
		dst = append(dst, " ,"[min(i, 1)])
		dst = append(dst, g.metrics[p.Metric].Field...)
		dst = append(dst, '=')
		dst = append(dst, p.Text...)
		if !p.IsFloat {
			dst = append(dst, 'i')
		}
	}
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, pts[0].T*1_000_000, 10)
	return append(dst, '\n')
}

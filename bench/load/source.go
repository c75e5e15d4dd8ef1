package load

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/tsd-db/tsd/bench/gen"
)

// Source yields request bodies.
type Source interface {
	// Next appends the next body to dst and returns it with its point
	// count; 0 points means the source is exhausted.
	Next(dst []byte) ([]byte, int, error)
}

// GenSource draws bodies of batch points from a generator.
type GenSource struct {
	enc   *gen.Encoder
	put   *putEncoder // telnet: gen's lines, cheaper
	batch int
	limit int
	sent  int
}

// NewGenSource returns a source of g's points in format f, batch points a
// body, stopping after limit points (0: the whole dataset).
func NewGenSource(g *gen.Gen, f gen.Format, batch, limit int) *GenSource {
	s := &GenSource{enc: gen.NewEncoder(g, f), batch: batch, limit: limit}
	if f == gen.FormatTelnet {
		s.put = newPutEncoder(g)
	}
	return s
}

// Next implements Source.
func (s *GenSource) Next(dst []byte) ([]byte, int, error) {
	n := s.batch
	if s.limit > 0 {
		n = min(n, s.limit-s.sent)
		if n <= 0 {
			return dst, 0, nil
		}
	}
	var k int
	var err error
	if s.put != nil {
		dst, k = s.put.appendBatch(dst, max(n, 1))
	} else {
		dst, k, err = s.enc.AppendBatch(dst, n)
	}
	s.sent += k
	return dst, k, err
}

// putEncoder writes the bytes gen.Gen.AppendPut writes, from each metric's
// "put <name> " and each host's " k=v ..." kept ready, and the timestamp
// text reused while it does not change: the load client shares the cores
// with the server, and building every line word by word made it spend a
// third of the CPU a telnet run took.
type putEncoder struct {
	g       *gen.Gen
	p       gen.Point
	prefix  [][]byte // per metric
	suffix  [][]byte // per host, with the line's "\n"
	lastT   int64
	tsText  []byte
	started bool
}

func newPutEncoder(g *gen.Gen) *putEncoder {
	e := &putEncoder{g: g}
	for _, m := range g.Metrics() {
		e.prefix = append(e.prefix, []byte("put "+m.Name+" "))
	}
	for _, h := range g.Hosts() {
		var b []byte
		for i, k := range gen.TagKeys {
			b = append(append(append(append(b, ' '), k...), '='), h.Tags[i]...)
		}
		e.suffix = append(e.suffix, append(b, '\n'))
	}
	return e
}

// appendBatch appends up to n lines and returns how many it wrote.
func (e *putEncoder) appendBatch(dst []byte, n int) ([]byte, int) {
	k := 0
	for ; k < n && e.g.Next(&e.p); k++ {
		if !e.started || e.p.T != e.lastT {
			e.started, e.lastT = true, e.p.T
			e.tsText = appendOpenTSDBTime(e.tsText[:0], e.p.T)
		}
		dst = append(dst, e.prefix[e.p.Metric]...)
		dst = append(dst, e.tsText...)
		dst = append(dst, ' ')
		dst = append(dst, e.p.Text...)
		dst = append(dst, e.suffix[e.p.Host]...)
	}
	return dst, k
}

// appendOpenTSDBTime writes seconds when ms is whole seconds, else ms, as
// gen does.
func appendOpenTSDBTime(dst []byte, ms int64) []byte {
	if ms%1000 == 0 {
		return strconv.AppendInt(dst, ms/1000, 10)
	}
	return strconv.AppendInt(dst, ms, 10)
}

// LineSource reads a file of telnet put lines or Influx lines and cuts it
// into bodies of batch lines. A telnet line is one point; an Influx line
// counts one point per field.
type LineSource struct {
	r      *bufio.Reader
	influx bool
	batch  int
}

// NewLineSource reads r; influx selects Influx point counting.
func NewLineSource(r io.Reader, influx bool, batch int) *LineSource {
	return &LineSource{r: bufio.NewReaderSize(r, 1<<20), influx: influx, batch: batch}
}

// Next implements Source.
func (s *LineSource) Next(dst []byte) ([]byte, int, error) {
	points := 0
	for lines := 0; lines < s.batch; {
		line, err := s.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return dst, 0, fmt.Errorf("line longer than 1 MiB")
		}
		if len(bytes.TrimSpace(line)) > 0 {
			dst = append(dst, line...)
			if line[len(line)-1] != '\n' {
				dst = append(dst, '\n')
			}
			points += s.pointsIn(line)
			lines++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return dst, 0, err
		}
	}
	return dst, points, nil
}

// pointsIn counts an Influx line's fields: the commas of the field set
// (between the first and second unescaped, unquoted spaces) plus one. The
// bench's own lines never quote; a quoted string field with commas or spaces
// miscounts, which only affects the points figure.
func (s *LineSource) pointsIn(line []byte) int {
	if !s.influx {
		return 1
	}
	spaces, n := 0, 1
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case ' ':
			spaces++
		case ',':
			if spaces == 1 {
				n++
			}
		}
	}
	return n
}

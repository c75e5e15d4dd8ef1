package load

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

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
	batch int
	limit int
	sent  int
}

// NewGenSource returns a source of g's points in format f, batch points a
// body, stopping after limit points (0: the whole dataset).
func NewGenSource(g *gen.Gen, f gen.Format, batch, limit int) *GenSource {
	return &GenSource{enc: gen.NewEncoder(g, f), batch: batch, limit: limit}
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
	dst, k, err := s.enc.AppendBatch(dst, n)
	s.sent += k
	return dst, k, err
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

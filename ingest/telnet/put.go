package telnet

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/uid"
)

// DefaultMaxTags is the default of Options.MaxTags (tsd.storage.max_tags).
const DefaultMaxTags = 32

// MinPutArgs is the number of arguments a put line needs: metric,
// timestamp, value (OpenTSDB needs a tag too).
const MinPutArgs = 3

// Options configure a Parser. The zero value is valid after EnsureDefaults.
type Options struct {
	// MaxTags bounds a point's tags (tsd.storage.max_tags). Default 32.
	MaxTags int
	// AllowSpecialChars lists characters the name rules accept besides
	// OpenTSDB's (tsd.core.tag.allow_specialchars). Default none.
	AllowSpecialChars string
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MaxTags == 0 {
		o.MaxTags = DefaultMaxTags
	}
	return o
}

// Validate reports the first bad field.
func (o *Options) Validate() error {
	if o.MaxTags < 1 {
		return fmt.Errorf("telnet: max tags %d < 1", o.MaxTags)
	}
	return nil
}

// ErrorKind tells the two families of put errors apart.
type ErrorKind uint8

const (
	// IllegalArgument is OpenTSDB's IllegalArgumentException:
	// "put: illegal argument: ...".
	IllegalArgument ErrorKind = iota
	// InvalidValue is its NumberFormatException: "put: invalid value: ...".
	InvalidValue
)

// PutError is a put line OpenTSDB would refuse.
type PutError struct {
	Kind ErrorKind
	Msg  string
}

// Error returns the reply line without its "\n".
func (e *PutError) Error() string {
	if e.Kind == InvalidValue {
		return "put: invalid value: " + e.Msg
	}
	return "put: illegal argument: " + e.Msg
}

// InvalidValue reports a value that is not a number (OpenTSDB counts it
// as rpc.errors type=invalid_values).
func (e *PutError) InvalidValue() bool { return e.Kind == InvalidValue }

func illegal(msg string) error { return &PutError{Kind: IllegalArgument, Msg: msg} }

// Byte class bits of a put line's names; a plain byte (one the name rules
// accept) has none.
const (
	clsCheck = 1 << iota // a byte the validator must judge (non-ASCII or refused)
	clsEqual
	clsSpace
)

// Parser parses put lines. It holds immutable configuration, a scratch
// buffer and recent lines' tags (tagMemo): one per connection (or per
// goroutine); not safe for concurrent use.
type Parser struct {
	opts    Options
	names   *parse.Names
	cls     [256]uint8
	scratch []byte // the timestamp without its dots
	memo    tagMemo
	key     []byte // the point's Key: 'T', the metric, 0, the tags as written
}

// NewParser returns a parser; opts may be nil for the defaults.
func NewParser(opts *Options) (*Parser, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.EnsureDefaults().Validate(); err != nil {
		return nil, err
	}
	p := &Parser{opts: o, names: parse.NewNames(uid.NewValidator(uid.RulesOpenTSDB, o.AllowSpecialChars))}
	for c := range p.cls {
		if !p.names.Plain(byte(c)) {
			p.cls[c] = clsCheck
		}
	}
	p.cls[' '], p.cls['='] = clsSpace, clsEqual
	p.memo.init()
	return p, nil
}

// ParsePut parses a whole put line (its first word, the command, is not
// looked at; the line has no "\n") into pt, which it resets. On error pt
// is meaningless and the error is a *PutError.
func (p *Parser) ParsePut(line []byte, pt *parse.Point) error {
	pt.Reset()
	s0 := indexSpace(line, 0)
	s1, check := -1, false
	if s0 >= 0 {
		s1, check = p.scanMetric(line, s0+1)
	}
	s2 := nextSpace(line, s1)
	if s2 < 0 {
		n := bytes.Count(line, []byte{' '})
		return illegal("not enough arguments (need least " + strconv.Itoa(MinPutArgs) + ", got " + strconv.Itoa(n) + ")")
	}
	s3 := nextSpace(line, s2)
	end := s3
	if end < 0 {
		end = len(line)
	}
	metric, tsText, value := line[s0+1:s1], line[s1+1:s2], line[s2+1:end]
	if len(metric) == 0 {
		return illegal("empty metric name")
	}
	ts, err := p.timestamp(tsText)
	if err != nil {
		return err
	}
	if len(value) == 0 {
		return illegal("empty value")
	}
	pt.Metric = metric
	var rest []byte
	if s3 >= 0 {
		rest = line[s3+1:]
	}
	extra, tcheck, err := p.tags(rest, pt)
	if err != nil {
		return err
	}
	if err := p.finish(pt, ts, value, rest, extra, check || tcheck); err != nil {
		return err
	}
	// The point's Key (parse.Point.Key): the metric and tags as written
	// name the same series every time; names hold no 0 byte.
	p.key = append(append(append(append(p.key[:0], 'T'), metric...), 0), rest...)
	pt.Key = p.key
	return nil
}

// scanMetric returns the index of the ' ' ending the metric that starts at
// line[i] (-1 if none) and whether the metric needs the validator.
func (p *Parser) scanMetric(line []byte, i int) (int, bool) {
	acc := uint8(0)
	for ; i < len(line); i++ {
		if i = p.skipPlain(line, i); i == len(line) {
			break
		}
		c := p.cls[line[i]]
		if c&clsSpace != 0 {
			break
		}
		acc |= c
	}
	// '=' is no name byte unless allowed specially: the validator decides.
	check := acc&(clsCheck|clsEqual) != 0
	if i == len(line) {
		return -1, check
	}
	return i, check
}

// nextSpace returns the index of the first ' ' after line[from], or -1.
// The words it crosses (command, timestamp, value) are a few bytes long, so
// a plain loop beats bytes.IndexByte's call and vector setup.
func nextSpace(line []byte, from int) int {
	if from < 0 {
		return -1
	}
	return indexSpace(line, from+1)
}

// indexSpace returns the index of the first ' ' at or after line[i], or -1.
func indexSpace(line []byte, i int) int {
	for ; i < len(line); i++ {
		if line[i] == ' ' {
			return i
		}
	}
	return -1
}

// timestamp parses the timestamp word with its dots removed.
func (p *Parser) timestamp(text []byte) (int64, error) {
	if hasDot(text) {
		p.scratch = p.scratch[:0]
		for _, c := range text {
			if c != '.' {
				p.scratch = append(p.scratch, c)
			}
		}
		text = p.scratch
	}
	ts, err := parse.ParseLong(text)
	if err != nil {
		return 0, &PutError{Kind: InvalidValue, Msg: err.Error()}
	}
	if ts <= 0 {
		return 0, illegal("invalid timestamp: " + strconv.FormatInt(ts, 10))
	}
	return ts, nil
}

// hasDot reports a '.' in a timestamp word (a few bytes: no IndexByte).
func hasDot(text []byte) bool {
	for _, c := range text {
		if c == '.' {
			return true
		}
	}
	return false
}

// finish types the value, converts the time and checks the limits and the
// names, in OpenTSDB's order.
func (p *Parser) finish(pt *parse.Point, ts int64, value, rest []byte, extra int, check bool) error {
	v, err := parse.ParseOpenTSDBValue(value)
	if nf, ok := err.(*parse.NumberFormatError); ok {
		return &PutError{Kind: InvalidValue, Msg: nf.Msg}
	}
	if err != nil {
		return illegal("value is NaN or Infinite: " + parse.JavaDouble(v.Float()) +
			" for metric=" + string(pt.Metric) + " timestamp=" + strconv.FormatInt(ts, 10))
	}
	ms, ok := parse.OpenTSDBMillis(ts)
	if !ok {
		return illegal("bad timestamp=" + strconv.FormatInt(ts, 10) + " when trying to add value=" +
			string(parse.AppendJavaValue(nil, v)) + " to metric=" + string(pt.Metric) + ", tags=" + formatTags(rest))
	}
	v.T, v.Ms = ms, parse.IsOpenTSDBMillis(ts) && ms%1000 == 0
	pt.Value = v
	if n := len(pt.Tags) + extra; n > p.opts.MaxTags {
		return illegal("Too many tags: " + strconv.Itoa(n) + " maximum allowed: " + strconv.Itoa(p.opts.MaxTags) +
			", tags: " + formatTags(rest))
	}
	if !check {
		return nil // every name byte is one the rules accept
	}
	return p.checkNames(pt)
}

func (p *Parser) checkNames(pt *parse.Point) error {
	if err := p.names.Check(uid.Metric, pt.Metric); err != nil {
		return illegal(err.Error())
	}
	for _, t := range pt.Tags {
		if err := p.names.Check(uid.TagK, t.Key); err != nil {
			return illegal(err.Error())
		}
		if err := p.names.Check(uid.TagV, t.Value); err != nil {
			return illegal(err.Error())
		}
	}
	return nil
}

// RollupCommandError returns the reply to a refused rollup line: the put
// error's text with OpenTSDB's "rollup:" prefix.
func RollupCommandError(err error) string {
	if pe, ok := err.(*PutError); ok {
		if pe.Kind == InvalidValue {
			return "rollup: invalid value: " + pe.Msg
		}
		return "rollup: illegal argument: " + pe.Msg
	}
	return "rollup: illegal argument: " + err.Error()
}

// ParseRollup parses a rollup line, "rollup <spec> <metric> <timestamp>
// <value> <tagk=tagv>...", as RollupDataPointRpc does: at least one tag
// word, a spec word that is not empty, then the put fields by the put
// rules. It returns the spec word and the timestamp as sent (seconds or
// milliseconds; rollups take seconds only, which the writer checks).
func (p *Parser) ParseRollup(line []byte, pt *parse.Point) (spec []byte, rawTs int64, err error) {
	pt.Reset()
	if n := bytes.Count(line, []byte{' '}) + 1; n < 6 {
		return nil, 0, illegal("not enough arguments (need least 7, got " + strconv.Itoa(n-1) + ")")
	}
	s0 := indexSpace(line, 0)
	s1 := nextSpace(line, s0)
	spec = line[s0+1 : s1]
	if len(spec) == 0 {
		return nil, 0, illegal("Missing interval or aggregator")
	}
	// The rest is a put line whose "command" is the spec word.
	if err := p.ParsePut(line[s0+1:], pt); err != nil {
		return nil, 0, err
	}
	s2 := nextSpace(line, s1)
	s3 := nextSpace(line, s2)
	rawTs, err = p.timestamp(line[s2+1 : s3])
	return spec, rawTs, err
}

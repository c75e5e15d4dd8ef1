package influx

import (
	"bytes"
	"math"
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// Byte classes for scanning names.
const (
	clsPlain     = iota // printable ASCII with no meaning here
	clsCheck            // control, DEL or non-ASCII: the name goes to the validator
	clsComma            // ','
	clsSpace            // ' '
	clsEqual            // '='
	clsBackslash        // '\\'
)

var class = func() (t [256]uint8) {
	for c := range t {
		if c < 0x20 || c >= 0x7F {
			t[c] = clsCheck
		}
	}
	t[','], t[' '], t['='], t['\\'] = clsComma, clsSpace, clsEqual, clsBackslash
	return t
}()

// scanName returns the end of the name starting at b[i]: the first
// unescaped ',' or ' ' (and '=' when eq), or len(b). esc reports escapes to
// resolve; check reports bytes the validator must judge.
func scanName(b []byte, i int, eq bool) (end int, esc, check bool) {
	for {
		for i < len(b) && class[b[i]] == clsPlain {
			i++
		}
		if i >= len(b) {
			return i, esc, check
		}
		switch class[b[i]] {
		case clsCheck:
			check = true
		case clsComma, clsSpace:
			return i, esc, check
		case clsEqual:
			if eq {
				return i, esc, check
			}
		case clsBackslash:
			if i+1 < len(b) && escapable(b[i+1], eq) {
				esc = true
				i++
			}
		}
		i++
	}
}

// escapable reports whether a backslash before c escapes it: ',' and ' '
// everywhere, '=' in tag keys, tag values and field keys.
func escapable(c byte, eq bool) bool {
	return c == ',' || c == ' ' || (eq && c == '=')
}

// unescape appends src with its escapes resolved.
func unescape(dst, src []byte, eq bool) []byte {
	for i := 0; i < len(src); i++ {
		if src[i] == '\\' && i+1 < len(src) && escapable(src[i+1], eq) {
			i++
		}
		dst = append(dst, src[i])
	}
	return dst
}

// name resolves and checks the name b[start:end].
func (d *Decoder) name(b []byte, start, end int, esc, check, eq bool, kind uid.Kind) ([]byte, string) {
	n := b[start:end]
	if esc {
		off := len(d.esc)
		d.esc = unescape(d.esc, n, eq)
		n = d.esc[off:]
	}
	if check {
		if err := d.names.Check(kind, n); err != nil {
			return nil, err.Error()
		}
	}
	return n, ""
}

// parseLine parses one line (leading blanks removed) into d.fields and the
// point's tags; it returns the reason the line is bad, or "".
func (d *Decoder) parseLine(b []byte) string {
	d.esc, d.fields, d.pt.Tags = d.esc[:0], d.fields[:0], d.pt.Tags[:0]
	i, reason := d.parseMeasurement(b)
	for reason == "" && i < len(b) && b[i] == ',' {
		i, reason = d.parseTag(b, i+1)
	}
	if reason != "" {
		return reason
	}
	// The point's Key (parse.Point.Key): the measurement and tags as
	// written name the same series every time. Names never hold a 0 byte
	// (uid.RulesLossless), so a Key of valid names ends them at its only 0.
	d.key = append(append(append(d.key[:0], 'I'), b[:i]...), 0)
	d.keyLen = len(d.key)
	if i = skipBlank(b, i); i >= len(b) {
		return reasonMissingFields
	}
	strs := 0
	if i, strs, reason = d.parseFields(b, i); reason != "" {
		return reason
	}
	t, reason := d.parseTime(b, i)
	if reason != "" {
		return reason
	}
	for k := range d.fields {
		d.fields[k].val.T = t
	}
	d.stats.StringFields += int64(strs)
	return ""
}

func (d *Decoder) parseMeasurement(b []byte) (int, string) {
	if len(b) == 0 || b[0] == ',' {
		return 0, reasonMissingMeasurement
	}
	end, esc, check := scanName(b, 0, false)
	if end >= len(b) {
		return end, reasonMissingFields
	}
	m, reason := d.name(b, 0, end, esc, check, false, uid.Metric)
	if reason != "" {
		return end, reason
	}
	d.metric = append(append(d.metric[:0], m...), d.opts.Separator...)
	d.prefix = len(d.metric)
	return end, ""
}

// parseTag parses key=value at b[i:] and returns the index of the ',' or
// ' ' after it.
func (d *Decoder) parseTag(b []byte, i int) (int, string) {
	if i >= len(b) || class[b[i]] >= clsComma && class[b[i]] <= clsEqual {
		return i, reasonMissingTagKey
	}
	kend, kesc, kcheck := scanName(b, i, true)
	if kend >= len(b) || b[kend] != '=' {
		return kend, reasonMissingTagValue
	}
	v := kend + 1
	if v >= len(b) || b[v] == ',' || b[v] == ' ' {
		return v, reasonMissingTagValue
	}
	vend, vesc, vcheck := scanName(b, v, true)
	switch {
	case vend >= len(b):
		return vend, reasonMissingFields
	case b[vend] == '=':
		return vend, reasonInvalidTagFormat
	}
	key, val := b[i:kend], b[v:vend]
	var reason string
	if kesc || kcheck {
		if key, reason = d.name(b, i, kend, kesc, kcheck, true, uid.TagK); reason != "" {
			return vend, reason
		}
	}
	if vesc || vcheck {
		if val, reason = d.name(b, v, vend, vesc, vcheck, true, uid.TagV); reason != "" {
			return vend, reason
		}
	}
	return vend, d.addTag(key, val)
}

// addTag appends a tag after checking the tag limit and, through a 64-bit
// mask of key hashes, comparing keys only when a duplicate is possible.
func (d *Decoder) addTag(key, val []byte) string {
	if len(d.pt.Tags) == 0 {
		d.tagMask = 0
	}
	bit := uint64(1) << ((uint(len(key))*7 + uint(key[0])*3 + uint(key[len(key)-1])) & 63)
	if d.tagMask&bit != 0 {
		for _, t := range d.pt.Tags {
			if bytes.Equal(t.Key, key) {
				return reasonDuplicateTags
			}
		}
	}
	d.tagMask |= bit
	if len(d.pt.Tags) >= d.opts.MaxTags {
		return "too many tags: more than " + strconv.Itoa(d.opts.MaxTags)
	}
	d.pt.AddTag(key, val)
	return ""
}

// parseFields parses the field set at b[i:] and returns the index after
// it and the number of string fields.
func (d *Decoder) parseFields(b []byte, i int) (int, int, string) {
	strs := 0
	for {
		if b[i] == '=' {
			return i, strs, reasonMissingFieldKey
		}
		kend, esc, check := scanName(b, i, true)
		if kend >= len(b) || b[kend] != '=' || kend == i {
			return kend, strs, reasonInvalidFieldFormat
		}
		v := kend + 1
		if v >= len(b) || b[v] == ',' || b[v] == ' ' {
			return v, strs, reasonMissingFieldValue
		}
		end, val, isStr, reason := parseValue(b, v)
		if reason != "" {
			return end, strs, reason
		}
		if isStr {
			strs++
		} else {
			key := b[i:kend]
			if esc || check {
				if key, reason = d.name(b, i, kend, esc, check, true, uid.Metric); reason != "" {
					return end, strs, reason
				}
			}
			d.fields = append(d.fields, field{key: key, val: val})
		}
		switch {
		case end >= len(b) || b[end] == ' ':
			return end, strs, ""
		case b[end] != ',' || end+1 >= len(b):
			return end, strs, reasonInvalidFieldFormat
		}
		i = end + 1
	}
}

// parseValue parses the field value at b[v:] and returns the index after
// it.
func parseValue(b []byte, v int) (end int, val series.Point, isStr bool, reason string) {
	c := b[v]
	if c == '"' {
		end, reason = scanString(b, v+1)
		return end, val, true, reason
	}
	end = v + 1
	for end < len(b) && b[end] != ',' && b[end] != ' ' {
		end++
	}
	tok := b[v:end]
	switch {
	case c >= '0' && c <= '9' || c == '-' || c == '.':
		val, reason = parseNumber(tok)
	case c == 'n' || c == 'N':
		reason = reasonInvalidNumber
	default:
		val, reason = parseBool(tok)
	}
	return end, val, false, reason
}

// scanString returns the index after the closing quote of a string value
// whose body starts at b[i].
func scanString(b []byte, i int) (int, string) {
	for i < len(b) {
		switch b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1, ""
		}
		i++
	}
	return len(b), openQuote
}

func parseNumber(tok []byte) (series.Point, string) {
	switch tok[len(tok)-1] {
	case 'i':
		return parseInteger(tok[:len(tok)-1])
	case 'u':
		return parseUnsigned(tok[:len(tok)-1])
	}
	f, ok := parse.ParseFloat(tok)
	switch {
	case !ok || tok[0] == '+':
		return series.Point{}, reasonInvalidNumber
	case math.IsInf(f, 0):
		return series.Point{}, reasonInvalidFloat
	}
	return series.Float64Point(0, f), ""
}

func parseInteger(digits []byte) (series.Point, string) {
	if !decimalSyntax(digits, true) {
		return series.Point{}, reasonInvalidNumber
	}
	v, ok := parse.ParseInt(digits)
	if !ok {
		return series.Point{}, "unable to parse integer " + string(digits) + ": value out of range"
	}
	return series.IntPoint(0, v), ""
}

func parseUnsigned(digits []byte) (series.Point, string) {
	if !decimalSyntax(digits, false) {
		return series.Point{}, reasonInvalidNumber
	}
	u, ok := parse.ParseUint(digits)
	switch {
	case !ok:
		return series.Point{}, "unable to parse unsigned " + string(digits) + ": value out of range"
	case u > maxInt64:
		return series.Float64Point(0, float64(u)), ""
	}
	return series.IntPoint(0, int64(u)), ""
}

// decimalSyntax reports whether b is digits, with a leading '-' if neg.
func decimalSyntax(b []byte, neg bool) bool {
	if neg && len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parseBool(tok []byte) (series.Point, string) {
	switch string(tok) {
	case "t", "T", "true", "True", "TRUE":
		return series.IntPoint(0, 1), ""
	case "f", "F", "false", "False", "FALSE":
		return series.IntPoint(0, 0), ""
	}
	return series.Point{}, reasonInvalidBoolean
}

// parseTime reads the optional timestamp at b[i:] and returns it in ms.
func (d *Decoder) parseTime(b []byte, i int) (int64, string) {
	i = skipBlank(b, i)
	if i >= len(b) {
		return d.now, ""
	}
	end := i
	for end < len(b) && b[end] != ' ' {
		end++
	}
	tok := b[i:end]
	if !decimalSyntax(tok, true) {
		return 0, reasonBadTimestamp
	}
	if skipBlank(b, end) < len(b) {
		return 0, reasonInvalidPoint
	}
	ts, ok := parse.ParseInt(tok)
	if !ok {
		return 0, reasonBadTimestamp
	}
	ms, ok := d.prec.millis(ts)
	switch {
	case !ok:
		return 0, reasonTimeRange
	case ts < 0:
		return 0, reasonBefore1970
	}
	return ms, ""
}

// skipBlank skips spaces, tabs and NULs, as InfluxDB does between sections.
func skipBlank(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == 0) {
		i++
	}
	return i
}

// quoteScan finds where a line's string fields end, resumably: scan
// continues from where the previous call stopped, so joining n lines costs
// one pass over them.
type quoteScan struct {
	i       int
	fields  bool // past the measurement and tags
	inStr   bool
	afterEq bool // the previous byte was an unescaped '=' in the fields
}

// scan advances over b and reports whether it ends outside a string.
func (s *quoteScan) scan(b []byte) bool {
	for s.i < len(b) {
		c := b[s.i]
		switch {
		case s.inStr:
			if c == '\\' {
				s.i += 2
				continue
			}
			s.inStr = c != '"'
		case c == '\\' && s.i+1 < len(b) && escapable(b[s.i+1], true):
			s.i += 2
			s.afterEq = false
			continue
		case !s.fields:
			s.fields = c == ' '
		default:
			s.inStr = c == '"' && s.afterEq
			s.afterEq = c == '='
		}
		s.i++
	}
	return !s.inStr
}

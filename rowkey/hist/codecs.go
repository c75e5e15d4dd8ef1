package hist

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// SimpleCodec is the class name of OpenTSDB's simple bucketed codec, the
// only codec tsd knows.
const SimpleCodec = "net.opentsdb.core.SimpleHistogramDecoder"

// DefaultConfig is the codec table of OpenTSDB's documentation, tsd's
// default tsd.core.histograms.config.
const DefaultConfig = `{"net.opentsdb.core.SimpleHistogramDecoder": 0}`

// ErrNoCodec is wrapped when a value's codec id is not configured.
var ErrNoCodec = errors.New("hist: no codec")

// Codecs is the table of tsd.core.histograms.config: codec ids to codec
// classes. Only SimpleCodec can be named. A nil *Codecs has histograms
// disabled.
type Codecs struct {
	simple    int // the simple codec's id, -1 when not configured
	ids       []int
	configure string
}

// ParseConfig reads a codec table, a JSON object of class names to ids
// 0..255, with HistogramCodecManager's checks and messages. An empty
// object is valid: histograms are accepted by no codec.
func ParseConfig(text string) (*Codecs, error) {
	var m map[string]json.Number
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("hist: tsd.core.histograms.config is not a JSON object of names to ids: %w", err)
	}
	if dec.More() {
		return nil, errors.New("hist: tsd.core.histograms.config: trailing bytes after the object")
	}
	c := &Codecs{simple: -1, configure: text}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[int]bool{}
	for _, name := range names {
		id, err := m[name].Int64()
		if err != nil || id < 0 || id > 255 {
			return nil, fmt.Errorf("hist: ID for codec '%s' must be from 0 to 255.", name)
		}
		if seen[int(id)] {
			return nil, fmt.Errorf("hist: Duplicate ID found for codec '%s': %d", name, id)
		}
		seen[int(id)] = true
		if name != SimpleCodec {
			return nil, fmt.Errorf("hist: Unable to find a decoder named '%s' (tsd knows only %s)", name, SimpleCodec)
		}
		c.simple = int(id)
		c.ids = append(c.ids, int(id))
	}
	return c, nil
}

// SimpleID returns the simple codec's id; false when it is not
// configured.
func (c *Codecs) SimpleID() (uint8, bool) {
	if c == nil || c.simple < 0 {
		return 0, false
	}
	return uint8(c.simple), true
}

// Check returns ErrNoCodec, in OpenTSDB's words, unless id is configured.
func (c *Codecs) Check(id int) error {
	if c != nil {
		for _, x := range c.ids {
			if x == id {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: No codec found mapped to ID %d", ErrNoCodec, id)
}

// DecodeValue decodes a stored value (codec id first) into h.
func (c *Codecs) DecodeValue(h *Histogram, value []byte) error {
	if len(value) == 0 {
		return fmt.Errorf("%w: empty value", ErrCorrupt)
	}
	if err := c.Check(int(value[0])); err != nil {
		return err
	}
	return h.Decode(value, true)
}

// DecodeRaw decodes a codec's bytes without the id (the base64 value of
// /api/histogram and telnet) as codec id.
func (c *Codecs) DecodeRaw(h *Histogram, id int, raw []byte) error {
	if err := c.Check(id); err != nil {
		return err
	}
	if err := h.Decode(raw, false); err != nil {
		return err
	}
	h.ID = uint8(id)
	return nil
}

// String returns the configuration the table was parsed from.
func (c *Codecs) String() string {
	if c == nil {
		return ""
	}
	return c.configure
}

// AppendQualifier appends the qualifier of a histogram at offsetMs into
// its row: 06 + 2-byte seconds, or 06 + 4-byte milliseconds when ms (the
// timestamp was given in milliseconds) or the offset is not whole
// seconds.
func AppendQualifier(dst []byte, offsetMs int64, ms bool) ([]byte, error) {
	if offsetMs < 0 || offsetMs >= 3600*1000 {
		return dst, fmt.Errorf("hist: offset %d ms outside its row", offsetMs)
	}
	dst = append(dst, Prefix)
	if !ms && offsetMs%1000 == 0 {
		s := offsetMs / 1000
		return append(dst, byte(s>>8), byte(s)), nil
	}
	return append(dst, byte(offsetMs>>24), byte(offsetMs>>16), byte(offsetMs>>8), byte(offsetMs)), nil
}

// Prefix is the first byte of a histogram qualifier
// (HistogramDataPoint.PREFIX).
const Prefix = 0x06

// ParseQualifier returns a histogram qualifier's offset in ms and
// whether it is the 4-byte millisecond form.
func ParseQualifier(q []byte) (offsetMs int64, ms bool, err error) {
	switch {
	case len(q) == 3 && q[0] == Prefix:
		offsetMs = int64(q[1])<<8 | int64(q[2])
		offsetMs *= 1000
	case len(q) == 5 && q[0] == Prefix:
		offsetMs, ms = int64(q[1])<<24|int64(q[2])<<16|int64(q[3])<<8|int64(q[4]), true
	default:
		return 0, false, fmt.Errorf("%w: qualifier %x is not 06 + 2 or 4 bytes", ErrCorrupt, q)
	}
	if offsetMs >= 3600*1000 {
		return 0, false, fmt.Errorf("%w: qualifier %x: offset beyond the hour", ErrCorrupt, q)
	}
	return offsetMs, ms, nil
}

// IsQualifier reports whether q names a histogram column.
func IsQualifier(q []byte) bool {
	return (len(q) == 3 || len(q) == 5) && q[0] == Prefix
}

// Message returns err's text as OpenTSDB words it, without the
// package's sentinel prefix.
func Message(err error) string {
	for _, s := range []error{ErrCorrupt, ErrNoCodec} {
		if errors.Is(err, s) {
			return strings.TrimPrefix(err.Error(), s.Error()+": ")
		}
	}
	return err.Error()
}

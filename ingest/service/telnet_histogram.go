package service

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/ingest/telnet"
	"github.com/tsd-db/tsd/rowkey/hist"
)

// histogram stores one telnet histogram line at once, answering errors
// only, as HistogramDataPointRpc does:
//
//	histogram <metric> <timestamp> <id> <base64 codec bytes> <tagk=tagv>...
//	histogram <metric> <timestamp> <lo>,<hi>=<n>:...:u=<n>:o=<n> <tagk=tagv>...
//
// The third word is a codec id when it reads as a Java int; the base64
// bytes are the codec's without the id. The metric, timestamp and tags
// follow put's rules and messages. Lines refused before the point is
// built answer "histogram: illegal argument: ..." (or "invalid value");
// a value that does not decode, or a point the store refuses, answers as
// OpenTSDB's asynchronous error path does: "histogram: HBase error: ...".
func (c *telnetConn) histogram(line []byte) {
	if msg := c.histogramLine(string(line)); msg != "" {
		c.reply(msg)
	}
}

func (c *telnetConn) histogramLine(line string) string {
	const cmd = "histogram: "
	codecs := c.h.w.HistogramCodecs()
	if codecs == nil {
		return c.bad(cmd + "illegal argument: " + ErrHistogramsDisabled.Error())
	}
	words := strings.Split(line, " ")
	if len(words) < 5 {
		return c.bad(cmd + "illegal argument: not enough arguments (need least 5, got " + strconv.Itoa(len(words)-1) + ")")
	}
	id, err := strconv.ParseInt(words[3], 10, 32)
	hasID := err == nil
	value, tags := words[3], words[4:]
	if hasID {
		value, tags = words[4], words[5:]
	}
	// The metric, timestamp and tags are a put's: parse them as one.
	put := "histogram " + words[1] + " " + words[2] + " 0"
	if len(tags) > 0 {
		put += " " + strings.Join(tags, " ")
	}
	if err := c.parser.ParsePut([]byte(put), &c.pt); err != nil {
		var pe *telnet.PutError
		if errors.As(err, &pe) && pe.Kind == telnet.InvalidValue {
			return c.bad(cmd + "invalid value: " + pe.Msg)
		}
		if errors.As(err, &pe) {
			return c.bad(cmd + "illegal argument: " + pe.Msg)
		}
		return c.bad(cmd + "illegal argument: " + err.Error())
	}
	if value == "" {
		return c.bad(cmd + "illegal argument: empty histogram value")
	}
	h := &c.hist
	if hasID {
		raw, err := decodeBase64(value)
		if err != nil {
			return c.bad(cmd + "HBase error: " + err.Error())
		}
		if err := codecs.DecodeRaw(h, int(id), raw); err != nil {
			return c.bad(cmd + "HBase error: " + hist.Message(err))
		}
	} else {
		simple, ok := codecs.SimpleID()
		if !ok {
			return c.bad(cmd + "HBase error: No codec ID assigned to class class " + hist.SimpleCodec)
		}
		if err := hist.ParseBuckets(h, simple, value); err != nil {
			return c.bad(cmd + "HBase error: " + err.Error())
		}
	}
	err = c.sess.AddHistogram(context.Background(), &c.pt, h)
	var pe *PointError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrThrottled):
		return cmd + "Please throttle writes: " + ThrottleReason(err)
	case errors.As(err, &pe):
		return cmd + "HBase error: " + pe.Err.Error()
	}
	return cmd + "HBase error: " + err.Error()
}

// decodeBase64 reads base64 as JAXB's parseBase64Binary accepts it, with
// or without padding.
func decodeBase64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, errors.New("bad base64 histogram value: " + err.Error())
	}
	return b, nil
}

// bad counts a histogram line refused before it reached the writer.
func (c *telnetConn) bad(msg string) string {
	c.sess.CountBad(1)
	return msg
}

package promrw

import (
	"errors"
	"fmt"
	"strings"

	"github.com/klauspost/compress/snappy"
)

// Version is a remote_write protocol version.
type Version uint8

// Versions, by protobuf message.
const (
	// V1 is prometheus.WriteRequest (remote_write 1.0).
	V1 Version = 1
	// V2 is io.prometheus.write.v2.Request (remote_write 2.0).
	V2 Version = 2
)

// Message names as they appear in the Content-Type's proto parameter.
const (
	MessageV1 = "prometheus.WriteRequest"
	MessageV2 = "io.prometheus.write.v2.Request"
)

// String returns the message name.
func (v Version) String() string {
	if v == V2 {
		return MessageV2
	}
	return MessageV1
}

// ErrUnsupported marks a Content-Type naming a media type or protobuf
// message tsd does not read: answer 415 Unsupported Media Type.
var ErrUnsupported = errors.New("unsupported remote write content type")

const protobufMedia = "application/x-protobuf"

// ParseContentType returns the protocol of a request from its Content-Type
// header: empty or "application/x-protobuf" means 1.0, and the proto
// parameter picks the message. Other media types and messages wrap
// ErrUnsupported.
func ParseContentType(ct string) (Version, error) {
	ct = strings.TrimSpace(ct)
	if ct == "" {
		return V1, nil
	}
	media, params, _ := strings.Cut(ct, ";")
	if !strings.EqualFold(strings.TrimSpace(media), protobufMedia) {
		return 0, fmt.Errorf("%w: expected %s as the media type, got %q", ErrUnsupported, protobufMedia, ct)
	}
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return 0, fmt.Errorf("%w: parameter %q of %q is not key=value", ErrUnsupported, strings.TrimSpace(p), ct)
		}
		if strings.TrimSpace(k) != "proto" {
			continue
		}
		switch v = strings.Trim(strings.TrimSpace(v), `"`); v {
		case MessageV1:
			return V1, nil
		case MessageV2:
			return V2, nil
		}
		return 0, fmt.Errorf("%w: unknown remote write protobuf message %q, supported: %s, %s", ErrUnsupported, v, MessageV1, MessageV2)
	}
	return V1, nil
}

// Errors of Decompress.
var (
	// ErrTooLarge: the decoded body is over the limit (answer 413).
	ErrTooLarge = errors.New("remote write: decompressed body too large")
	// ErrSnappy: the body is not snappy block format (answer 400).
	ErrSnappy = errors.New("remote write: bad snappy body")
)

// Decompress decodes a snappy block-format body into dst's storage,
// reusing it when it is large enough, and returns the decoded bytes. The
// decoded length, read from the body's header, is checked against limit
// (bytes; <= 0 means none) before anything is allocated.
func Decompress(dst, body []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(body)
	if err != nil {
		return dst[:0], fmt.Errorf("%w: %v", ErrSnappy, err)
	}
	if limit > 0 && n > limit {
		return dst[:0], fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, limit)
	}
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	out, err := snappy.Decode(dst[:n], body)
	if err != nil {
		return dst[:0], fmt.Errorf("%w: %v", ErrSnappy, err)
	}
	return out, nil
}

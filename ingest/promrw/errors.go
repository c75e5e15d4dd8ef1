package promrw

import (
	"strconv"

	"github.com/tsd-db/tsd/ingest/parse"
)

// DecodeError is a body that is not a valid protobuf message of its
// version. It stops the Decoder; answer 400.
type DecodeError struct {
	Version Version
	Offset  int // byte offset in the decoded body
	Msg     string
}

// Error names the message type, the offset and the problem.
func (e *DecodeError) Error() string {
	return "malformed " + e.Version.String() + " at byte " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// SeriesError is a series (or one of its samples) that cannot be stored:
// the labels as sent, Prometheus-style, and the reason.
type SeriesError struct {
	Labels string // {__name__="up", job="api"}; label refs for a 2.0 series whose labels do not resolve
	Reason string
}

// Error reads "<reason> for series <labels>".
func (e *SeriesError) Error() string { return e.Reason + " for series " + e.Labels }

// Clone returns a copy (SeriesError holds no aliases; Clone is for symmetry
// with the other parsers' errors).
func (e *SeriesError) Clone() *SeriesError { c := *e; return &c }

// formatLabels prints labels as Prometheus's labels.String does, in the
// order sent.
func formatLabels(ls []parse.Tag) string {
	b := []byte{'{'}
	for i, l := range ls {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, l.Key...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, string(l.Value))
	}
	return string(append(b, '}'))
}

// formatRefs prints 2.0 label references: [1 2 3 4].
func formatRefs(refs []uint32) string {
	b := []byte{'['}
	for i, r := range refs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendUint(b, uint64(r), 10)
	}
	return string(append(b, ']'))
}

// badField describes a field skip could not step over.
func badField(f uint64, wt int) string {
	return "field " + strconv.FormatUint(f, 10) + " (wire type " + strconv.Itoa(wt) + ") is truncated or of an unsupported type"
}

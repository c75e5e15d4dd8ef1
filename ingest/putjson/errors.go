package putjson

import "strconv"

// SyntaxError is a body that is not a JSON object or array of objects.
type SyntaxError struct {
	Offset int // byte offset in the body
	Msg    string
}

// Error returns the problem and where: "expected ':' after an object key
// at byte 17".
func (e *SyntaxError) Error() string {
	return e.Msg + " at byte " + strconv.Itoa(e.Offset)
}

// PointError is a data point OpenTSDB would refuse; Msg is its detail
// message ("Metric name was empty").
type PointError struct {
	Msg string
}

// Error returns Msg.
func (e *PointError) Error() string { return e.Msg }

// Messages of OpenTSDB's put validation (PutDataPointRpc).
const (
	msgEmptyMetric  = "Metric name was empty"
	msgBadTimestamp = "Invalid timestamp"
	msgEmptyValue   = "Empty value"
	msgNotANumber   = "Unable to parse value to a number"
	msgNotAnObject  = "Invalid datapoint: expected a JSON object"
)

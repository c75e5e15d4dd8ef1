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

// MsgNotObjectOrArray is the Msg of the SyntaxError for a body that starts
// with neither '{' nor '[' (OpenTSDB answers it as the whole message).
const MsgNotObjectOrArray = "The JSON must start as an object or an array"

// PointError is a data point OpenTSDB would refuse; Msg is its detail
// message ("Metric name was empty").
type PointError struct {
	Msg string
}

// Error returns Msg.
func (e *PointError) Error() string { return e.Msg }

// InvalidValue reports a value that is not a number (OpenTSDB's
// NumberFormatException, counted as rpc.errors type=invalid_values).
func (e *PointError) InvalidValue() bool { return e.Msg == msgNotANumber }

// Messages of OpenTSDB's put validation (PutDataPointRpc).
const (
	msgEmptyMetric  = "Metric name was empty"
	msgBadTimestamp = "Invalid timestamp"
	msgEmptyValue   = "Empty value"
	msgNotANumber   = "Unable to parse value to a number"
	msgNotAnObject  = "Invalid datapoint: expected a JSON object"
)

// TooLargeError is a data point longer than Options.MaxElementBytes in a
// body read with ResetReader.
type TooLargeError struct {
	Index  int // the element's index in the array, from 0
	Offset int // byte offset of its start in the body
	Limit  int // Options.MaxElementBytes
}

// Error names the element: "data point 3 (at byte 1200) is larger than
// the limit of 1048576 bytes".
func (e *TooLargeError) Error() string {
	return "data point " + strconv.Itoa(e.Index) + " (at byte " + strconv.Itoa(e.Offset) +
		") is larger than the limit of " + strconv.Itoa(e.Limit) + " bytes"
}

package annotation

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// AppendJSON appends a as OpenTSDB's HTTP API writes it (Jackson's bean
// order): tsuid, description, notes, custom (left out when nil),
// startTime, endTime.
func AppendJSON(dst []byte, a *Annotation) []byte {
	dst = append(dst, `{"tsuid":`...)
	dst = jsonw.Jackson.AppendString(dst, a.TSUID)
	dst = append(dst, `,"description":`...)
	dst = jsonw.Jackson.AppendString(dst, a.Description)
	dst = append(dst, `,"notes":`...)
	dst = jsonw.Jackson.AppendString(dst, a.Notes)
	if a.Custom != nil {
		dst = append(dst, `,"custom":`...)
		dst = jsonw.Jackson.AppendSortedMap(dst, a.Custom)
	}
	dst = append(dst, `,"startTime":`...)
	dst = strconv.AppendInt(dst, a.StartTime, 10)
	dst = append(dst, `,"endTime":`...)
	dst = strconv.AppendInt(dst, a.EndTime, 10)
	return append(dst, '}')
}

// AppendStorageJSON appends a as OpenTSDB stores it in the cell: tsuid
// (left out when empty), startTime, endTime, description, notes, custom
// (null when nil).
func AppendStorageJSON(dst []byte, a *Annotation) []byte {
	dst = append(dst, '{')
	if a.TSUID != "" {
		dst = append(dst, `"tsuid":`...)
		dst = jsonw.Jackson.AppendString(dst, a.TSUID)
		dst = append(dst, ',')
	}
	dst = append(dst, `"startTime":`...)
	dst = strconv.AppendInt(dst, a.StartTime, 10)
	dst = append(dst, `,"endTime":`...)
	dst = strconv.AppendInt(dst, a.EndTime, 10)
	dst = append(dst, `,"description":`...)
	dst = jsonw.Jackson.AppendString(dst, a.Description)
	dst = append(dst, `,"notes":`...)
	dst = jsonw.Jackson.AppendString(dst, a.Notes)
	dst = append(dst, `,"custom":`...)
	if a.Custom == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonw.Jackson.AppendSortedMap(dst, a.Custom)
	}
	return append(dst, '}')
}

// wire is the JSON shape Decode reads. Pointers tell absent from empty.
type wire struct {
	TSUID       *string             `json:"tsuid"`
	StartTime   flexInt             `json:"startTime"`
	EndTime     flexInt             `json:"endTime"`
	Description *string             `json:"description"`
	Notes       *string             `json:"notes"`
	Custom      map[string]flexText `json:"custom"`
}

// Decode parses one annotation from JSON (a stored cell or a request
// body). Fields may come in any order; unknown fields are ignored; times
// may be numbers or strings of digits. Given is set as OpenTSDB's setters
// mark changes: endTime other than 0, description and notes other than
// "", custom not null.
func Decode(value []byte) (Annotation, error) {
	var w wire
	if err := strictUnmarshal(value, &w); err != nil {
		return Annotation{}, err
	}
	return w.annotation(), nil
}

// DecodeList parses a JSON array of annotations (a bulk request body).
func DecodeList(value []byte) ([]Annotation, error) {
	var ws []wire
	if err := strictUnmarshal(value, &ws); err != nil {
		return nil, err
	}
	out := make([]Annotation, len(ws))
	for i := range ws {
		out[i] = ws[i].annotation()
	}
	return out, nil
}

// strictUnmarshal decodes exactly one JSON value into v (json.Unmarshal
// refuses trailing data).
func strictUnmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return invalidf("%s", jsonMessage(err))
	}
	return nil
}

// jsonMessage drops encoding/json's Go type names from its messages.
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return "field " + te.Field + ": expected " + jsonKind(te.Type.Kind().String()) + ", got " + te.Value
		}
		return "expected " + jsonKind(te.Type.Kind().String()) + ", got " + te.Value
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr", "string":
		return "a string"
	}
	return k
}

func (w *wire) annotation() Annotation {
	a := Annotation{StartTime: w.StartTime.v, EndTime: w.EndTime.v}
	if w.TSUID != nil {
		a.TSUID = *w.TSUID
	}
	if w.Description != nil {
		a.Description = *w.Description
	}
	if w.Notes != nil {
		a.Notes = *w.Notes
	}
	if w.Custom != nil {
		a.Custom = make(map[string]string, len(w.Custom))
		for k, v := range w.Custom {
			a.Custom[k] = v.s
		}
	}
	a.Given = a.Changed()
	return a
}

// Changed returns the fields that differ from their defaults, the ones
// OpenTSDB's setters mark changed; a parser sets Given from it.
func (a *Annotation) Changed() Fields {
	var f Fields
	if a.EndTime != 0 {
		f |= FieldEndTime
	}
	if a.Description != "" {
		f |= FieldDescription
	}
	if a.Notes != "" {
		f |= FieldNotes
	}
	if a.Custom != nil {
		f |= FieldCustom
	}
	return f
}

// flexInt reads a JSON number or a string holding one, truncating a
// fraction as Jackson does for a long; null reads as 0.
type flexInt struct{ v int64 }

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		f.v = v
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x >= math.MaxInt64 || x <= math.MinInt64 {
		return invalidf("%s is not an integer time", b)
	}
	f.v = int64(x)
	return nil
}

// flexText reads a custom value: a string, or a number or boolean taken
// as its text, as Jackson coerces scalars into a Map<String,String>; null
// reads as "".
type flexText struct{ s string }

func (f *flexText) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		return json.Unmarshal(b, &f.s)
	case string(b) == "null":
		f.s = ""
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return invalidf("custom values must be strings, got %.40s", b)
	default:
		f.s = string(b)
	}
	return nil
}

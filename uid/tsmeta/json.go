package tsmeta

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// appendStorageJSON appends the ts_meta cell: OpenTSDB's storage JSON
// (TSMeta.getStorageJSON) in its field order, custom keys sorted.
func appendStorageJSON(dst, tsuid []byte, f *Fields, created int64) []byte {
	dst = append(dst, `{"tsuid":`...)
	dst = jsonw.JSON.AppendString(dst, strings.ToUpper(hex.EncodeToString(tsuid)))
	dst = jsonw.JSON.AppendPair(append(dst, ','), "displayName", f.DisplayName)
	dst = jsonw.JSON.AppendPair(append(dst, ','), "description", f.Description)
	dst = jsonw.JSON.AppendPair(append(dst, ','), "notes", f.Notes)
	dst = strconv.AppendInt(append(dst, `,"created":`...), created, 10)
	dst = append(dst, `,"custom":`...)
	if f.Custom == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonw.JSON.AppendSortedMap(dst, f.Custom)
	}
	dst = jsonw.JSON.AppendPair(append(dst, ','), "units", f.Units)
	dst = jsonw.JSON.AppendPair(append(dst, ','), "dataType", f.DataType)
	dst = strconv.AppendInt(append(dst, `,"retention":`...), int64(f.Retention), 10)
	dst = jsonw.AppendJacksonDouble(append(dst, `,"max":`...), f.Max)
	dst = jsonw.AppendJacksonDouble(append(dst, `,"min":`...), f.Min)
	return append(dst, '}')
}

// storedJSON is the ts_meta cell as read; absent fields keep defaults.
type storedJSON struct {
	DisplayName *string           `json:"displayName"`
	Description *string           `json:"description"`
	Notes       *string           `json:"notes"`
	Created     Number            `json:"created"`
	Custom      map[string]string `json:"custom"`
	Units       *string           `json:"units"`
	DataType    *string           `json:"dataType"`
	Retention   Number            `json:"retention"`
	Max         Number            `json:"max"`
	Min         Number            `json:"min"`
}

// decodeFields reads a ts_meta cell into f and returns its created time.
func decodeFields(f *Fields, raw []byte) (int64, error) {
	var j storedJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return 0, err
	}
	get := func(dst *string, p *string) {
		if p != nil {
			*dst = *p
		}
	}
	get(&f.DisplayName, j.DisplayName)
	get(&f.Description, j.Description)
	get(&f.Notes, j.Notes)
	get(&f.Units, j.Units)
	get(&f.DataType, j.DataType)
	f.Custom = j.Custom
	if j.Retention.Set {
		f.Retention = int(j.Retention.V)
	}
	if j.Max.Set {
		f.Max = j.Max.V
	}
	if j.Min.Set {
		f.Min = j.Min.V
	}
	return int64(j.Created.V), nil
}

// Number is a JSON number as Jackson reads one into a double: a number,
// or a string holding one or NaN, Infinity, -Infinity. null leaves it
// unset.
type Number struct {
	V   float64
	Set bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *Number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := ParseJavaDouble(s)
	if err != nil {
		return err
	}
	n.V, n.Set = v, true
	return nil
}

// ParseJavaDouble parses a decimal number, NaN, Infinity or -Infinity, as
// Java's Double.parseDouble does for the forms JSON carries.
func ParseJavaDouble(s string) (float64, error) {
	switch strings.TrimSpace(s) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || strings.ContainsAny(s, "xXpP_") || strings.EqualFold(strings.TrimLeft(strings.TrimSpace(s), "+-"), "inf") || strings.EqualFold(strings.TrimLeft(strings.TrimSpace(s), "+-"), "infinity") {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return v, nil
}

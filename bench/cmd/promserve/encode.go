package main

import (
	"context"
	"errors"
	"net/http"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/prometheus/prometheus/util/jsonutil"
)

// The answer is encoded as Prometheus's web/api/v1 encodes it: the whole
// Response marshalled by json-iterator in its standard-library-compatible
// configuration, with encoders registered for the result types so sample
// pairs go straight to the stream through util/jsonutil, then written in
// one Write. Importing web/api/v1 itself would pull in some forty modules.
func init() {
	jsoniter.RegisterTypeEncoderFunc("promql.Matrix", encodeMatrix, neverEmpty)
	jsoniter.RegisterTypeEncoderFunc("promql.Vector", encodeVector, neverEmpty)
}

// errorType is a Prometheus API error class.
type errorType struct {
	name   string
	status int
}

// The error classes of Prometheus's API and their status codes.
var (
	errBadData  = errorType{"bad_data", http.StatusBadRequest}
	errExec     = errorType{"execution", http.StatusUnprocessableEntity}
	errCanceled = errorType{"canceled", 499}
	errTimeout  = errorType{"timeout", http.StatusServiceUnavailable}
	errInternal = errorType{"internal", http.StatusInternalServerError}
)

type apiError struct {
	typ errorType
	err error
}

// classify maps an engine error to its class as Prometheus does.
func classify(err error) *apiError {
	var canceled promql.ErrQueryCanceled
	var timeout promql.ErrQueryTimeout
	var stor promql.ErrStorage
	switch {
	case errors.As(err, &canceled), errors.Is(err, context.Canceled):
		return &apiError{errCanceled, err}
	case errors.As(err, &timeout):
		return &apiError{errTimeout, err}
	case errors.As(err, &stor):
		return &apiError{errInternal, err}
	}
	return &apiError{errExec, err}
}

// response is the envelope of every answer.
type response struct {
	Status    string   `json:"status"`
	Data      any      `json:"data,omitempty"`
	ErrorType string   `json:"errorType,omitempty"`
	Error     string   `json:"error,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	Infos     []string `json:"infos,omitempty"`
}

func respond(w http.ResponseWriter, data any, warnings annotations.Annotations, query string) {
	warn, info := warnings.AsStrings(query, 10, 10)
	b, err := jsoniter.ConfigCompatibleWithStandardLibrary.Marshal(&response{
		Status: "success", Data: data, Warnings: warn, Infos: info,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

func respondError(w http.ResponseWriter, e *apiError) {
	b, err := jsoniter.ConfigCompatibleWithStandardLibrary.Marshal(&response{
		Status: "error", ErrorType: e.typ.name, Error: e.err.Error(),
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.typ.status)
	w.Write(b)
}

// neverEmpty keeps an empty result as [] rather than dropping it.
func neverEmpty(unsafe.Pointer) bool { return false }

// encodeMatrix writes [{"metric":{...},"values":[[t,"v"],...]},...].
func encodeMatrix(ptr unsafe.Pointer, s *jsoniter.Stream) {
	m := *(*promql.Matrix)(ptr)
	s.WriteArrayStart()
	for i := range m {
		if i > 0 {
			s.WriteMore()
		}
		encodeSeries(&m[i], s)
	}
	s.WriteArrayEnd()
}

func encodeSeries(ser *promql.Series, s *jsoniter.Stream) {
	s.WriteObjectStart()
	s.WriteObjectField("metric")
	encodeLabels(ser.Metric, s)
	if len(ser.Floats) > 0 {
		s.WriteMore()
		s.WriteObjectField("values")
		s.WriteArrayStart()
		for i, p := range ser.Floats {
			if i > 0 {
				s.WriteMore()
			}
			encodePair(p.T, p.F, s)
		}
		s.WriteArrayEnd()
	}
	if len(ser.Histograms) > 0 {
		s.WriteMore()
		s.WriteObjectField("histograms")
		s.WriteArrayStart()
		for i, p := range ser.Histograms {
			if i > 0 {
				s.WriteMore()
			}
			encodeHistogramPair(p.T, p, s)
		}
		s.WriteArrayEnd()
	}
	s.WriteObjectEnd()
}

// encodeVector writes [{"metric":{...},"value":[t,"v"]},...].
func encodeVector(ptr unsafe.Pointer, s *jsoniter.Stream) {
	v := *(*promql.Vector)(ptr)
	s.WriteArrayStart()
	for i, smp := range v {
		if i > 0 {
			s.WriteMore()
		}
		s.WriteObjectStart()
		s.WriteObjectField("metric")
		encodeLabels(smp.Metric, s)
		s.WriteMore()
		if smp.H != nil {
			s.WriteObjectField("histogram")
			encodeHistogramPair(smp.T, promql.HPoint{T: smp.T, H: smp.H}, s)
		} else {
			s.WriteObjectField("value")
			encodePair(smp.T, smp.F, s)
		}
		s.WriteObjectEnd()
	}
	s.WriteArrayEnd()
}

func encodePair(t int64, f float64, s *jsoniter.Stream) {
	s.WriteArrayStart()
	jsonutil.MarshalTimestamp(t, s)
	s.WriteMore()
	jsonutil.MarshalFloat(f, s)
	s.WriteArrayEnd()
}

func encodeHistogramPair(t int64, p promql.HPoint, s *jsoniter.Stream) {
	s.WriteArrayStart()
	jsonutil.MarshalTimestamp(t, s)
	s.WriteMore()
	jsonutil.MarshalHistogram(p.H, s)
	s.WriteArrayEnd()
}

func encodeLabels(ls labels.Labels, s *jsoniter.Stream) {
	s.WriteObjectStart()
	first := true
	ls.Range(func(l labels.Label) {
		if !first {
			s.WriteMore()
		}
		first = false
		s.WriteString(l.Name)
		s.WriteRaw(":")
		s.WriteString(l.Value)
	})
	s.WriteObjectEnd()
}

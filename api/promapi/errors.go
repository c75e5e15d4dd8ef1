package promapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/prometheus/promql"
	"github.com/valyala/fasthttp"
)

// statusClientClosed is the status Prometheus answers a canceled query
// with (nginx's "client closed request").
const statusClientClosed = 499

// errorType is a Prometheus API error class: its errorType string and the
// HTTP status Prometheus sends with it (web/api/v1 getDefaultErrorCode).
type errorType struct {
	name   string
	status int
}

var (
	errorBadData  = errorType{"bad_data", fasthttp.StatusBadRequest}
	errorExec     = errorType{"execution", fasthttp.StatusUnprocessableEntity}
	errorTimeout  = errorType{"timeout", fasthttp.StatusServiceUnavailable}
	errorCanceled = errorType{"canceled", statusClientClosed}
	errorInternal = errorType{"internal", fasthttp.StatusInternalServerError}
	errorMethod   = errorType{"bad_data", fasthttp.StatusMethodNotAllowed}
	// errorUnavailable is Prometheus's class for a server that cannot take
	// the request now; tsd answers it 503 with Retry-After, as it answers
	// every overload (Prometheus's handler has no status of its own for it).
	errorUnavailable = errorType{"unavailable", fasthttp.StatusServiceUnavailable}
)

// apiError is an error answered as {"status":"error","errorType":..}.
type apiError struct {
	typ errorType
	err error
}

func (e *apiError) Error() string { return e.typ.name + ": " + e.err.Error() }

func badData(err error) *apiError { return &apiError{errorBadData, err} }

// invalidParam is bad_data naming the parameter, in Prometheus's words.
func invalidParam(name string, err error) *apiError {
	return badData(fmt.Errorf("invalid parameter %q: %w", name, err))
}

// execError classifies an error from the engine or the Queryable as
// Prometheus does: canceled, timeout, storage (internal), else execution.
func execError(err error) *apiError {
	var (
		canceled promql.ErrQueryCanceled
		timeout  promql.ErrQueryTimeout
		stor     promql.ErrStorage
	)
	switch {
	case errors.As(err, &canceled), errors.Is(err, context.Canceled):
		return &apiError{errorCanceled, err}
	case errors.As(err, &timeout), errors.Is(err, context.DeadlineExceeded):
		return &apiError{errorTimeout, err}
	case errors.As(err, &stor):
		return &apiError{errorInternal, err}
	}
	return &apiError{errorExec, err}
}

// errMethod names a method the endpoint does not serve.
func errMethod(ctx *fasthttp.RequestCtx) error {
	return fmt.Errorf("method %s not allowed; use GET or POST", ctx.Method())
}

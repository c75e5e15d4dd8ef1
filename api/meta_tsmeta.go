package api

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/uid/index/lookup"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// handleTSMeta is /api/uid/tsmeta (UniqueIdRpc.handleTSMeta): GET reads one
// series (tsuid=) or every series a lookup finds (m=, a list); POST changes
// the given fields, PUT resets the others too, either by tsuid or by m=
// with create=true for a series without TSMeta; DELETE removes the user's
// fields (204). Every series of the series index has a TSMeta.
func (a *metaAPI) handleTSMeta(ctx *fasthttp.RequestCtx) {
	if !a.svc.HasTSMeta() {
		writeError(ctx, fasthttp.StatusNotImplemented, "Endpoint not implemented: /api/uid/tsmeta", "")
		return
	}
	switch m := apiMethod(ctx); m {
	case fasthttp.MethodGet:
		a.getTSMeta(ctx)
	case fasthttp.MethodPost, fasthttp.MethodPut:
		if !writeReadOnly(ctx, a.s.opts.Gate) {
			a.updateTSMeta(ctx, m == fasthttp.MethodPut)
		}
	case fasthttp.MethodDelete:
		if !writeReadOnly(ctx, a.s.opts.Gate) {
			a.deleteTSMeta(ctx)
		}
	default:
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed",
			"The HTTP method ["+m+"] is not permitted for this endpoint")
	}
}

func (a *metaAPI) getTSMeta(ctx *fasthttp.RequestCtx) {
	args := ctx.QueryArgs()
	if args.Has("tsuid") {
		tsuid, ok := a.parseTSUID(ctx, string(args.Peek("tsuid")))
		if !ok {
			return
		}
		m, err := a.svc.GetTSMeta(ctx, tsuid)
		if err != nil {
			a.tsMetaError(ctx, err)
			return
		}
		writeJSON(ctx, fasthttp.StatusOK, appendTSMeta(nil, m))
		return
	}
	mq, ok := requiredParam(ctx, "m")
	if !ok {
		return
	}
	q, err := lookup.ParseM(mq)
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, err.Error(), err.Error())
		return
	}
	if !a.s.admitQuery(ctx) {
		return
	}
	tsuids, err := a.svc.LookupTSUIDs(ctx, &q)
	if err != nil {
		a.s.queries.Release()
		a.tsMetaError(ctx, err)
		return
	}
	// Each TSMeta is read as its part of the answer is made, so the
	// answer holds a part at a time, whatever the number of series.
	src := &lazyList{open: []byte{'['}, end: []byte{']'}, n: len(tsuids),
		elem: func(ctx context.Context, dst []byte, i int) ([]byte, error) {
			m, err := a.svc.TSMetaOf(ctx, []byte(tsuids[i]))
			if err != nil {
				return dst, err
			}
			return appendTSMeta(dst, m), nil
		}}
	if err := answer.Write(ctx, src, a.s.openTSDBAnswer(ctx, false)); err != nil {
		a.tsMetaError(ctx, err)
	}
}

// lazyList is a Source of a JSON list whose elements are made (and may
// fail) as the answer is written: open, n elements with commas, end.
type lazyList struct {
	open, end []byte
	n         int
	elem      func(ctx context.Context, dst []byte, i int) ([]byte, error)
	i         int
	opened    bool
}

// Next implements answer.Source.
func (l *lazyList) Next(ctx context.Context, dst []byte, max int) ([]byte, bool, error) {
	if !l.opened {
		dst, l.opened = append(dst, l.open...), true
	}
	for ; l.i < l.n && len(dst) < max; l.i++ {
		if l.i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = l.elem(ctx, dst, l.i); err != nil {
			return dst, false, err
		}
	}
	if l.i < l.n {
		return dst, false, nil
	}
	return append(dst, l.end...), true, nil
}

// Close implements answer.Source.
func (l *lazyList) Close() {}

// parseTSUID decodes a hex TSUID; false when it answered 400.
func (a *metaAPI) parseTSUID(ctx *fasthttp.RequestCtx, h string) ([]byte, bool) {
	b, err := a.svc.ParseTSUID(h)
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the TSUID", err.Error())
		return nil, false
	}
	return b, true
}

// tsMetaError answers the service's errors as UniqueIdRpc does.
func (a *metaAPI) tsMetaError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, tsmeta.ErrNoChange):
		ctx.SetStatusCode(fasthttp.StatusNotModified)
	case errors.Is(err, lookup.ErrNoTSMeta):
		writeError(ctx, fasthttp.StatusNotFound, lookup.ErrNoTSMeta.Error(), "")
	case errors.Is(err, lookup.ErrUnknownUID):
		writeError(ctx, fasthttp.StatusNotFound, "Unable to find one of the UIDs", causeText(err, lookup.ErrUnknownUID))
	case errors.Is(err, lookup.ErrUnknownName):
		writeError(ctx, fasthttp.StatusNotFound, "Unable to find one of the UIDs", causeText(err, lookup.ErrUnknownName))
	case errors.Is(err, lookup.ErrBadTSUID):
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the TSUID", err.Error())
	default:
		var pe *lookup.ParseError
		if errors.As(err, &pe) {
			writeError(ctx, fasthttp.StatusBadRequest, pe.Message, pe.Message)
			return
		}
		a.internalError(ctx, "tsmeta", err)
	}
}

// tsMetaBody is the JSON of a TSMeta request (OpenTSDB's TSMeta bean);
// absent fields stay nil.
type tsMetaBody struct {
	TSUID       *string         `json:"tsuid"`
	Description *string         `json:"description"`
	DisplayName *string         `json:"displayName"`
	Notes       *string         `json:"notes"`
	Units       *string         `json:"units"`
	DataType    *string         `json:"dataType"`
	Custom      json.RawMessage `json:"custom"`
	Retention   *tsmeta.Number  `json:"retention"`
	Max         *tsmeta.Number  `json:"max"`
	Min         *tsmeta.Number  `json:"min"`
}

// parseTSMetaBody parses the JSON body of a TSMeta request into its TSUID
// (hex, "" when absent) and update.
func parseTSMetaBody(b []byte) (string, tsmeta.Update, error) {
	var r tsMetaBody
	var upd tsmeta.Update
	if err := json.Unmarshal(b, &r); err != nil {
		return "", upd, err
	}
	upd.Description, upd.DisplayName, upd.Notes, upd.Units, upd.DataType = r.Description, r.DisplayName, r.Notes, r.Units, r.DataType
	if len(r.Custom) > 0 {
		upd.CustomSet = true
		if err := json.Unmarshal(r.Custom, &upd.Custom); err != nil {
			return "", upd, err
		}
	}
	if r.Retention != nil && r.Retention.Set {
		n := int(r.Retention.V)
		upd.Retention = &n
	}
	if r.Max != nil && r.Max.Set {
		upd.Max = &r.Max.V
	}
	if r.Min != nil && r.Min.Set {
		upd.Min = &r.Min.V
	}
	tsuid := ""
	if r.TSUID != nil {
		tsuid = *r.TSUID
	}
	return tsuid, upd, nil
}

// tsMetaRequest reads the JSON body, or the query string (parseTSMetaQS:
// tsuid, display_name, description, notes, units, data_type, retention,
// max, min) when there is none; false when it answered an error.
func tsMetaRequest(ctx *fasthttp.RequestCtx) (string, tsmeta.Update, bool) {
	if hasContent(ctx) {
		b, ok := requestBody(ctx)
		if !ok {
			return "", tsmeta.Update{}, false
		}
		tsuid, upd, err := parseTSMetaBody(b)
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
			return "", upd, false
		}
		return tsuid, upd, true
	}
	var upd tsmeta.Update
	args := ctx.QueryArgs()
	str := func(k string) *string {
		if !args.Has(k) {
			return nil
		}
		s := string(args.Peek(k))
		return &s
	}
	upd.DisplayName, upd.Description, upd.Notes = str("display_name"), str("description"), str("notes")
	upd.Units, upd.DataType = str("units"), str("data_type")
	if v := args.Peek("retention"); len(v) > 0 {
		n, err := strconv.ParseInt(string(v), 10, 32)
		if err != nil {
			writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse 'retention' value", "")
			return "", upd, false
		}
		r := int(n)
		upd.Retention = &r
	}
	for _, f := range []struct {
		k   string
		dst **float64
	}{{"max", &upd.Max}, {"min", &upd.Min}} {
		if v := args.Peek(f.k); len(v) > 0 {
			x, err := tsmeta.ParseJavaDouble(string(v))
			if err != nil {
				writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse '"+f.k+"' value", "")
				return "", upd, false
			}
			*f.dst = &x
		}
	}
	return string(args.Peek("tsuid")), upd, true
}

// updateTSMeta serves POST and PUT.
func (a *metaAPI) updateTSMeta(ctx *fasthttp.RequestCtx, overwrite bool) {
	h, upd, ok := tsMetaRequest(ctx)
	if !ok {
		return
	}
	create := false
	var tsuid []byte
	if h == "" {
		// No TSUID: the series is named by m=metric{tagk=tagv,...}.
		mq, ok := requiredParam(ctx, "m")
		if !ok {
			return
		}
		q, err := lookup.ParseM(mq)
		if err == nil {
			tsuid, err = a.svc.TSUIDOf(ctx, &q)
		}
		if err != nil {
			a.updateError(ctx, err)
			return
		}
		create = string(ctx.QueryArgs().Peek("create")) == "true"
		exists, err := a.svc.TSMetaExists(ctx, tsuid)
		if err != nil {
			a.internalError(ctx, "tsmeta", err)
			return
		}
		if !exists && !create {
			writeError(ctx, fasthttp.StatusBadRequest,
				`Could not find TSMeta, specify "create=true" to create a new one.`, "")
			return
		}
	} else if tsuid, ok = a.parseTSUID(ctx, h); !ok {
		return
	}
	m, err := a.svc.UpdateTSMeta(ctx, tsuid, &upd, overwrite, create)
	if err != nil {
		a.updateError(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, appendTSMeta(nil, m))
}

// updateError answers a failed POST or PUT: syncToStorage's "Requested
// TSMeta did not exist" is a 400 there, a missing name a 404.
func (a *metaAPI) updateError(ctx *fasthttp.RequestCtx, err error) {
	switch {
	case errors.Is(err, lookup.ErrNoTSMeta):
		const msg = "Requested TSMeta did not exist"
		writeError(ctx, fasthttp.StatusBadRequest, msg, msg)
	case errors.Is(err, lookup.ErrUnknownUID), errors.Is(err, lookup.ErrUnknownName):
		writeError(ctx, fasthttp.StatusNotFound, "Unable to find one or more UIDs", err.Error())
	default:
		a.tsMetaError(ctx, err)
	}
}

func (a *metaAPI) deleteTSMeta(ctx *fasthttp.RequestCtx) {
	h, _, ok := tsMetaRequest(ctx)
	if !ok {
		return
	}
	if h == "" {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to delete TSMeta information", "Missing UID")
		return
	}
	tsuid, err := a.svc.ParseTSUID(h)
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to delete TSMeta information", err.Error())
		return
	}
	if err := a.svc.DeleteTSMeta(ctx, tsuid); err != nil {
		a.internalError(ctx, "tsmeta", err)
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// appendTSMeta appends OpenTSDB's TSMeta JSON as Jackson writes the bean
// (fields in declaration order, then the getter-only properties; custom
// left out when null, max and min NaN quoted).
func appendTSMeta(dst []byte, m *lookup.TSMeta) []byte {
	dst = append(dst, `{"tsuid":`...)
	dst = jsonw.JSON.AppendString(dst, m.TSUIDHex)
	dst = appendUIDMeta(append(dst, `,"metric":`...), &m.Metric)
	dst = append(dst, `,"tags":[`...)
	for i := range m.Tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendUIDMeta(dst, &m.Tags[i])
	}
	dst = append(dst, ']')
	return appendTSMetaFields(dst, m)
}

// appendTSMetaFields appends the fields after "tags" and the closing
// brace.
func appendTSMetaFields(dst []byte, m *lookup.TSMeta) []byte {
	dst = jsonw.JSON.AppendPair(append(dst, ','), "description", m.Description)
	dst = jsonw.JSON.AppendPair(append(dst, ','), "notes", m.Notes)
	dst = strconv.AppendInt(append(dst, `,"created":`...), m.Created, 10)
	if m.Custom != nil {
		dst = jsonw.JSON.AppendSortedMap(append(dst, `,"custom":`...), m.Custom)
	}
	dst = jsonw.JSON.AppendPair(append(dst, ','), "units", m.Units)
	dst = strconv.AppendInt(append(dst, `,"retention":`...), int64(m.Retention), 10)
	dst = jsonw.AppendJacksonDouble(append(dst, `,"max":`...), m.Max)
	dst = jsonw.AppendJacksonDouble(append(dst, `,"min":`...), m.Min)
	dst = jsonw.JSON.AppendPair(append(dst, ','), "displayName", m.DisplayName)
	dst = jsonw.JSON.AppendPair(append(dst, ','), "dataType", m.DataType)
	dst = strconv.AppendInt(append(dst, `,"lastReceived":`...), m.LastReceived, 10)
	dst = strconv.AppendInt(append(dst, `,"totalDatapoints":`...), m.TotalDatapoints, 10)
	return append(dst, '}')
}

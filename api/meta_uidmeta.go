package api

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/uid"
)

// uidMetaBody is the JSON of a UIDMeta request; absent fields stay nil.
type uidMetaBody struct {
	UID         *string         `json:"uid"`
	Type        *string         `json:"type"`
	Description *string         `json:"description"`
	Notes       *string         `json:"notes"`
	DisplayName *string         `json:"displayName"`
	Custom      json.RawMessage `json:"custom"`
}

// handleUIDMeta is /api/uid/uidmeta (UniqueIdRpc.handleUIDMeta): GET reads
// (query string uid and type), POST changes the given fields, PUT resets
// the others too, DELETE removes the meta (204). A UID without a name is
// 404 "Could not find the requested UID"; an update naming no field is
// 304. method_override works for GET.
func (a *metaAPI) handleUIDMeta(ctx *fasthttp.RequestCtx) {
	switch m := apiMethod(ctx); m {
	case fasthttp.MethodGet:
		a.getUIDMeta(ctx)
	case fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodDelete:
		a.changeUIDMeta(ctx, m)
	default:
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed",
			"The HTTP method ["+m+"] is not permitted for this endpoint")
	}
}

func (a *metaAPI) getUIDMeta(ctx *fasthttp.RequestCtx) {
	hexUID, ok := requiredParam(ctx, "uid")
	if !ok {
		return
	}
	typ, ok := requiredParam(ctx, "type")
	if !ok {
		return
	}
	kind, id, ok := a.parseUIDRef(ctx, typ, hexUID)
	if !ok {
		return
	}
	m, err := a.svc.UIDs().GetMeta(ctx, kind, id)
	a.answerUIDMeta(ctx, &m, err)
}

// changeUIDMeta serves POST, PUT and DELETE.
func (a *metaAPI) changeUIDMeta(ctx *fasthttp.RequestCtx, method string) {
	if a.s.refuseStateChangingGET(ctx) || writeReadOnly(ctx, a.s.opts.Gate) {
		return
	}
	if !hasContent(ctx) {
		// parseUIDMetaQS: getRequiredQueryStringParam for both.
		for _, p := range []string{"uid", "type"} {
			if _, ok := requiredParam(ctx, p); !ok {
				return
			}
		}
	}
	req, ok := uidMetaRequest(ctx)
	if !ok {
		return
	}
	if req.UID == nil || *req.UID == "" {
		uidMetaArgError(ctx, method, "Missing UID")
		return
	}
	if req.Type == nil || *req.Type == "" {
		uidMetaArgError(ctx, method, "Missing type")
		return
	}
	kind, id, ok := a.parseUIDRef(ctx, *req.Type, *req.UID)
	if !ok {
		return
	}
	u := a.svc.UIDs()
	if method == fasthttp.MethodDelete {
		if err := u.DeleteMeta(ctx, kind, id); err != nil {
			a.answerUIDMeta(ctx, nil, err)
			return
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	upd, err := req.update()
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the given JSON", err.Error())
		return
	}
	m, err := u.UpdateMeta(ctx, kind, id, upd, method == fasthttp.MethodPut)
	a.answerUIDMeta(ctx, &m, err)
}

// uidMetaArgError answers UIDMeta's IllegalArgumentException (msg) as
// UniqueIdRpc wraps it: BadRequestException(e) for POST and PUT, the
// message twice; BadRequestException("Unable to delete UIDMeta
// information", e) for DELETE.
func uidMetaArgError(ctx *fasthttp.RequestCtx, method, msg string) {
	if method == fasthttp.MethodDelete {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to delete UIDMeta information", msg)
		return
	}
	writeError(ctx, fasthttp.StatusBadRequest, msg, msg)
}

// uidMetaRequest reads the JSON body, or the query string (uid, type,
// display_name, description, notes) when there is none.
func uidMetaRequest(ctx *fasthttp.RequestCtx) (uidMetaBody, bool) {
	var req uidMetaBody
	if hasContent(ctx) {
		return req, decodeBody(ctx, &req)
	}
	args := ctx.QueryArgs()
	str := func(k string) *string {
		if !args.Has(k) {
			return nil
		}
		s := string(args.Peek(k))
		return &s
	}
	req.UID, req.Type = str("uid"), str("type")
	req.DisplayName, req.Description, req.Notes = str("display_name"), str("description"), str("notes")
	return req, true
}

// update turns the request into a uid.MetaUpdate.
func (r *uidMetaBody) update() (uid.MetaUpdate, error) {
	upd := uid.MetaUpdate{Description: r.Description, Notes: r.Notes, DisplayName: r.DisplayName}
	if len(r.Custom) > 0 {
		upd.CustomSet = true
		if err := json.Unmarshal(r.Custom, &upd.Custom); err != nil {
			return upd, err
		}
	}
	return upd, nil
}

// answerUIDMeta writes m, or the error's status.
func (a *metaAPI) answerUIDMeta(ctx *fasthttp.RequestCtx, m *uid.UIDMeta, err error) {
	switch {
	case err == nil:
		writeJSON(ctx, fasthttp.StatusOK, appendUIDMeta(nil, m))
	case errors.Is(err, uid.ErrNoMetaChange):
		ctx.SetStatusCode(fasthttp.StatusNotModified)
	case errors.Is(err, uid.ErrNoSuchID):
		writeError(ctx, fasthttp.StatusNotFound, "Could not find the requested UID", err.Error())
	default:
		a.internalError(ctx, "uidmeta", err)
	}
}

// appendUIDMeta appends OpenTSDB's UIDMeta JSON.
func appendUIDMeta(dst []byte, m *uid.UIDMeta) []byte {
	dst = append(dst, `{"uid":`...)
	dst = jsonw.JSON.AppendString(dst, m.UID)
	dst = append(dst, `,"type":`...)
	dst = jsonw.JSON.AppendString(dst, uid.MetaTypeName(m.Kind))
	for _, f := range [...]struct{ k, v string }{{"name", m.Name}, {"description", m.Description}, {"notes", m.Notes}} {
		dst = jsonw.JSON.AppendPair(append(dst, ','), f.k, f.v)
	}
	dst = append(dst, `,"created":`...)
	dst = strconv.AppendInt(dst, m.Created, 10)
	dst = append(dst, `,"custom":`...)
	if m.Custom == nil {
		dst = append(dst, "null"...)
	} else {
		dst = jsonw.JSON.AppendSortedMap(dst, m.Custom)
	}
	dst = append(dst, `,"displayName":`...)
	dst = jsonw.JSON.AppendString(dst, m.DisplayName)
	return append(dst, '}')
}

package api

import (
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/uid"
)

// handleUID is /api/uid/<sub> (OpenTSDB's UniqueIdRpc): assign, rename,
// uidmeta and tsmeta.
func (a *metaAPI) handleUID(ctx *fasthttp.RequestCtx) {
	switch sub := subEndpoint(ctx.Path()); sub {
	case "assign":
		a.handleAssign(ctx)
	case "rename":
		a.handleRename(ctx)
	case "uidmeta":
		a.handleUIDMeta(ctx)
	case "tsmeta":
		a.handleTSMeta(ctx)
	default:
		writeError(ctx, fasthttp.StatusNotImplemented, "Other UID endpoints have not been implemented yet", "")
	}
}

// uidTypes are the type names of assign and rename, in response order.
var uidTypes = []string{"metric", "tagk", "tagv"}

// uidTypeKind maps assign's and rename's type names (TSDB.assignUid: any
// case of metric, tagk, tagv) to kinds.
func uidTypeKind(typ string) (uid.Kind, bool) {
	switch strings.ToLower(typ) {
	case "metric":
		return uid.Metric, true
	case "tagk":
		return uid.TagK, true
	case "tagv":
		return uid.TagV, true
	}
	return 0, false
}

// uidHex renders a UID in OpenTSDB's upper-case hex of the kind's width.
func uidHex(u *uid.UIDs, kind uid.Kind, id uid.ID) string {
	return strings.ToUpper(hex.EncodeToString(u.AppendID(nil, kind, id)))
}

// javaSplitComma splits like Java's String.split(","): trailing empty
// strings are dropped.
func javaSplitComma(s string) []string {
	parts := strings.Split(s, ",")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// handleAssign is /api/uid/assign: GET metric=a,b&tagk=..&tagv=.. or POST
// {"metric":[..],"tagk":[..],"tagv":[..]}. Each name is assigned on its
// own; the answer maps names to UIDs per type and failures to messages
// under <type>_errors, with 200 when all succeeded and 400 otherwise.
func (a *metaAPI) handleAssign(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	if a.s.refuseStateChangingGET(ctx) || writeReadOnly(ctx, a.s.opts.Gate) {
		return
	}
	src, ok := assignRequest(ctx)
	if !ok {
		return
	}
	if len(src) == 0 {
		writeError(ctx, fasthttp.StatusBadRequest, "Missing values to assign UIDs", "")
		return
	}
	out, failed := []byte{'{'}, 0
	for i, typ := range assignOrder(src) {
		done, errs := map[string]string{}, map[string]string{}
		for _, name := range src[typ] {
			if id, msg := a.assignOne(ctx, typ, name); msg != "" {
				errs[name] = msg
				failed++
			} else {
				done[name] = id
			}
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonw.JSON.AppendSortedMap(jsonw.JSON.AppendKey(out, typ), done)
		if len(errs) > 0 {
			out = jsonw.JSON.AppendSortedMap(jsonw.JSON.AppendKey(append(out, ','), typ+"_errors"), errs)
		}
	}
	code := fasthttp.StatusOK
	if failed > 0 {
		code = fasthttp.StatusBadRequest
	}
	writeJSON(ctx, code, append(out, '}'))
}

// assignRequest reads the names to assign by type; false when it answered
// an error.
func assignRequest(ctx *fasthttp.RequestCtx) (map[string][]string, bool) {
	src := map[string][]string{}
	if ctx.IsPost() {
		return src, decodeBody(ctx, &src)
	}
	for _, typ := range uidTypes {
		if v := ctx.QueryArgs().Peek(typ); len(v) > 0 {
			if names := javaSplitComma(string(v)); len(names) > 0 {
				src[typ] = names
			}
		}
	}
	return src, true
}

// assignOrder lists the request's types: metric, tagk, tagv, then any
// other in byte order.
func assignOrder(src map[string][]string) []string {
	var out, other []string
	for _, t := range uidTypes {
		if _, ok := src[t]; ok {
			out = append(out, t)
		}
	}
	for t := range src {
		if !slices.Contains(uidTypes, t) {
			other = append(other, t)
		}
	}
	slices.Sort(other)
	return append(out, other...)
}

// assignOne assigns one name (TSDB.assignUid) and returns its UID in hex,
// or the error message.
func (a *metaAPI) assignOne(ctx *fasthttp.RequestCtx, typ, name string) (string, string) {
	if msg := a.typedNameError(typ, name); msg != "" {
		return "", msg
	}
	kind, ok := uidTypeKind(typ)
	if !ok {
		return "", "Unknown type name"
	}
	u := a.svc.UIDs()
	id, err := u.Lookup(ctx, kind, []byte(name))
	if err == nil {
		return "", "Name already exists with UID: " + uidHex(u, kind, id)
	}
	if errors.Is(err, uid.ErrNoSuchName) {
		id, err = u.Assign(ctx, kind, []byte(name))
	}
	if err != nil {
		return "", err.Error()
	}
	return uidHex(u, kind, id), ""
}

// typedNameError checks name as TSDB.assignUid and renameUid do, with
// Tags.validateString(type, name) before the type is looked at: the message
// names the type as the request spelled it ("Invalid tagv (\"v!\"): ..."),
// not the kind's words of the put path ("Invalid tag value"). The rules are
// the same for every kind. Empty when the name is valid.
func (a *metaAPI) typedNameError(typ, name string) string {
	err := a.valid.ValidateString(uid.Metric, name)
	var ne *uid.NameError
	if !errors.As(err, &ne) {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	e := *ne
	e.Kind = uid.NumKinds // no kind: the message says "Invalid name"
	return "Invalid " + typ + strings.TrimPrefix(e.Error(), "Invalid name")
}

// handleRename is /api/uid/rename: GET metric|tagk|tagv=<old>&name=<new>
// or POST {"metric":"old","name":"new"}; {"result":"true"}, or 400
// {"result":"false","error":...}.
func (a *metaAPI) handleRename(ctx *fasthttp.RequestCtx) {
	if !ctx.IsGet() && !ctx.IsPost() {
		writeError(ctx, fasthttp.StatusMethodNotAllowed, "Method not allowed",
			"The HTTP method["+string(ctx.Method())+"] is not permitted for this endpoint")
		return
	}
	if a.s.refuseStateChangingGET(ctx) || writeReadOnly(ctx, a.s.opts.Gate) {
		return
	}
	src := map[string]string{}
	if ctx.IsPost() {
		if !decodeBody(ctx, &src) {
			return
		}
	} else {
		for _, k := range append(slices.Clone(uidTypes), "name") {
			if v := ctx.QueryArgs().Peek(k); len(v) > 0 {
				src[k] = string(v)
			}
		}
	}
	typ, oldName, newName := renameRequest(src)
	if typ == "" || oldName == "" || newName == "" {
		writeError(ctx, fasthttp.StatusBadRequest, "Missing necessary values to rename UID", "")
		return
	}
	if msg := a.renameOne(ctx, typ, oldName, newName); msg != "" {
		body := jsonw.JSON.AppendString([]byte(`{"result":"false","error":`), msg)
		writeJSON(ctx, fasthttp.StatusBadRequest, append(body, '}'))
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, []byte(`{"result":"true"}`))
}

// renameRequest picks the type and old name (metric, tagk, tagv, then any
// other key in byte order) and the new name.
func renameRequest(src map[string]string) (typ, oldName, newName string) {
	keys := make([]string, 0, len(src))
	for k := range src {
		if k != "name" && !slices.Contains(uidTypes, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range append(slices.Clone(uidTypes), keys...) {
		if v, ok := src[k]; ok {
			return k, v, src["name"]
		}
	}
	return "", "", src["name"]
}

// renameOne renames (TSDB.renameUid) and returns the error message, if any.
func (a *metaAPI) renameOne(ctx *fasthttp.RequestCtx, typ, oldName, newName string) string {
	for _, n := range []string{oldName, newName} {
		if msg := a.typedNameError(typ, n); msg != "" {
			return msg
		}
	}
	kind, ok := uidTypeKind(typ)
	if !ok {
		return "Unknown type name"
	}
	err := a.svc.Rename(ctx, kind, oldName, newName)
	switch {
	case err == nil:
		if a.s.opts.Ingest != nil {
			a.s.opts.Ingest.DropCaches() // sessions cache series keys by name
		}
		return ""
	case errors.Is(err, uid.ErrNoSuchName):
		return "Name(\"" + oldName + "\") does not exist"
	case errors.Is(err, uid.ErrNameExists):
		return "An UID with name " + newName + " for " + kind.String() + " already exists"
	}
	return err.Error()
}

// parseUIDRef reads a UIDMeta's type and hex UID; false when it answered
// an error.
func (a *metaAPI) parseUIDRef(ctx *fasthttp.RequestCtx, typ, hexUID string) (uid.Kind, uid.ID, bool) {
	kind, err := uid.ParseMetaType(typ)
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, err.Error(), "")
		return 0, 0, false
	}
	if len(hexUID)%2 == 1 {
		hexUID = "0" + hexUID
	}
	b, err := hex.DecodeString(hexUID)
	if err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Invalid UID: "+hexUID, err.Error())
		return 0, 0, false
	}
	w := a.svc.UIDs().Width(kind)
	if len(b) != w {
		writeError(ctx, fasthttp.StatusBadRequest, "Wrong id.length = "+strconv.Itoa(len(b))+
			" which is != "+strconv.Itoa(w)+" required for '"+kind.String()+"'", "")
		return 0, 0, false
	}
	id, _, _ := uid.ParseID(b, w)
	return kind, id, true
}

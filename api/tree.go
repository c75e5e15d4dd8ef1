package api

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index/lookup"
	"github.com/tsd-db/tsd/uid/tree"
)

// treeAPI serves /api/tree and its sub-endpoints as OpenTSDB's TreeRpc
// does: each sub-endpoint reads its request from a JSON body when there
// is one, else from the query string, and answers OpenTSDB's errors.
type treeAPI struct {
	s     *Server
	store *tree.Store
	svc   *lookup.Service // the series' TSMeta for /test and leaf names; nil: /test answers every TSUID unknown
}

// treeRoute returns /api/tree, planned (501) without a tree store.
func (s *Server) treeRoute(name string) endpoint {
	if s.opts.Trees == nil {
		return planned(name)
	}
	a := &treeAPI{s: s, store: s.opts.Trees, svc: s.opts.Meta}
	return endpoint{name: name, handle: a.handle}
}

// treeError is an answer other than 200: a status, OpenTSDB's message and
// details; status 304 and 204 have no body.
type treeError struct {
	code             int
	message, details string
}

func treeBad(msg string) *treeError { return &treeError{code: fasthttp.StatusBadRequest, message: msg} }

var errTreeMethod = treeBad("Unsupported HTTP request method")

func (e *treeError) write(ctx *fasthttp.RequestCtx) {
	if e.code == fasthttp.StatusNotModified || e.code == fasthttp.StatusNoContent {
		ctx.Response.Reset()
		ctx.SetStatusCode(e.code)
		return
	}
	writeError(ctx, e.code, e.message, e.details)
}

// fromStore maps the store's errors: ErrInvalid is 400 with OpenTSDB's
// message, ErrNoChange 304, a retryable or read-only store 503, others 500.
func (a *treeAPI) fromStore(ctx *fasthttp.RequestCtx, err error) *treeError {
	switch {
	case errors.Is(err, tree.ErrInvalid):
		return treeBad(strings.TrimPrefix(err.Error(), tree.ErrInvalid.Error()+": "))
	case errors.Is(err, tree.ErrNoChange):
		return &treeError{code: fasthttp.StatusNotModified}
	case errors.Is(err, storage.ErrRetryable), errors.Is(err, storage.ErrReadOnly), errors.Is(err, context.DeadlineExceeded):
		ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
		return &treeError{code: fasthttp.StatusServiceUnavailable, message: "Storage unavailable", details: err.Error()}
	}
	a.s.log.Error("tree request failed", "path", string(ctx.Path()), "err", err)
	return &treeError{code: fasthttp.StatusInternalServerError, message: "Unexpected exception", details: err.Error()}
}

func (a *treeAPI) handle(ctx *fasthttp.RequestCtx) {
	method, nerr := noteMethod(ctx)
	if nerr != nil {
		writeError(ctx, nerr.code, nerr.message, nerr.details)
		return
	}
	var e *treeError
	switch sub := apiSub(ctx.Path()); sub {
	case "":
		e = a.tree(ctx, method)
	case "branch":
		e = a.branch(ctx, method)
	case "rule":
		e = a.rule(ctx, method)
	case "rules":
		e = a.rules(ctx, method)
	case "test":
		e = a.test(ctx, method)
	case "collisions", "notmatched":
		e = a.failures(ctx, method, sub == "collisions")
	default:
		e = &treeError{code: fasthttp.StatusNotFound, message: "This endpoint is not supported"}
	}
	if e != nil {
		e.write(ctx)
	}
}

// changing refuses a state-changing request that came as a GET (unless
// allowed) or while the store is read-only; true when it answered.
func (a *treeAPI) changing(ctx *fasthttp.RequestCtx) bool {
	return a.s.refuseStateChangingGET(ctx) || writeReadOnly(ctx, a.s.opts.Gate)
}

// body returns the request body, nil when there is none; false when it
// answered an error.
func (a *treeAPI) body(ctx *fasthttp.RequestCtx) ([]byte, bool) {
	if !hasContent(ctx) {
		return nil, true
	}
	return requestBody(ctx)
}

func (a *treeAPI) notFoundTree(id int) *treeError {
	return &treeError{code: fasthttp.StatusNotFound, message: "Unable to locate tree: " + strconv.Itoa(id)}
}

// loadTree reads a tree, answering 400 for a bad id and 404 for none.
func (a *treeAPI) loadTree(ctx *fasthttp.RequestCtx, id int) (*tree.Tree, *treeError) {
	t, err := a.store.Tree(ctx, id)
	if errors.Is(err, tree.ErrNotFound) {
		return nil, a.notFoundTree(id)
	}
	if err != nil {
		return nil, a.fromStore(ctx, err)
	}
	return t, nil
}

// treeIDParam reads treeid: 0 when absent and not required.
func treeIDParam(ctx *fasthttp.RequestCtx, required bool) (int, *treeError) {
	args := ctx.QueryArgs()
	if !args.Has("treeid") {
		if required {
			return 0, treeBad("Missing parameter <code>treeid</code>")
		}
		return 0, nil
	}
	v := string(args.Peek("treeid"))
	if required && v == "" {
		return 0, treeBad("Missing parameter <code>treeid</code>")
	}
	id, err := strconv.Atoi(v)
	if err != nil {
		return 0, treeBad("Unable to parse 'tree' value")
	}
	return id, nil
}

// tree serves /api/tree (TreeRpc.handleTree).
func (a *treeAPI) tree(ctx *fasthttp.RequestCtx, method string) *treeError {
	raw, ok := a.body(ctx)
	if !ok {
		return nil
	}
	var edit tree.TreeEdit
	var props map[string]string
	if raw != nil {
		var err error
		if edit, props, err = tree.ParseTreeJSON(raw); err != nil {
			return a.fromStore(ctx, err)
		}
	} else {
		id, e := treeIDParam(ctx, false)
		if e != nil {
			return e
		}
		edit.ID = id
		for _, k := range []string{"name", "description", "notes", "strict_match", "enabled", "store_failures"} {
			if ctx.QueryArgs().Has(k) {
				_ = edit.Set(k, string(ctx.QueryArgs().Peek(k)))
			}
		}
	}
	switch method {
	case fasthttp.MethodGet:
		return a.getTrees(ctx, edit.ID)
	case fasthttp.MethodPost, fasthttp.MethodPut:
		if a.changing(ctx) {
			return nil
		}
		return a.storeTree(ctx, &edit, method == fasthttp.MethodPut)
	case fasthttp.MethodDelete:
		if a.changing(ctx) {
			return nil
		}
		def := string(ctx.QueryArgs().Peek("definition"))
		if raw != nil {
			def = props["definition"]
		}
		if _, e := a.loadTree(ctx, edit.ID); e != nil {
			return e
		}
		if err := a.store.DeleteTree(ctx, edit.ID, strings.EqualFold(def, "true")); err != nil {
			return a.fromStore(ctx, err)
		}
		return &treeError{code: fasthttp.StatusNoContent}
	}
	return errTreeMethod
}

func (a *treeAPI) getTrees(ctx *fasthttp.RequestCtx, id int) *treeError {
	if id != 0 {
		t, e := a.loadTree(ctx, id)
		if e != nil {
			return e
		}
		writeJSON(ctx, fasthttp.StatusOK, t.AppendJSON(nil))
		return nil
	}
	all, err := a.store.Trees(ctx)
	if err != nil {
		return a.fromStore(ctx, err)
	}
	out := []byte{'['}
	for i, t := range all {
		if i > 0 {
			out = append(out, ',')
		}
		out = t.AppendJSON(out)
	}
	writeJSON(ctx, fasthttp.StatusOK, append(out, ']'))
	return nil
}

// storeTree edits the tree named by the request, or creates one when it
// names none.
func (a *treeAPI) storeTree(ctx *fasthttp.RequestCtx, edit *tree.TreeEdit, overwrite bool) *treeError {
	var (
		t   *tree.Tree
		err error
	)
	if edit.ID > 0 {
		if _, e := a.loadTree(ctx, edit.ID); e != nil {
			return e
		}
		t, err = a.store.EditTree(ctx, edit, overwrite)
	} else {
		t, err = a.store.CreateTree(ctx, edit)
	}
	if err != nil {
		return a.fromStore(ctx, err)
	}
	writeJSON(ctx, fasthttp.StatusOK, t.AppendJSON(nil))
	return nil
}

// branch serves /api/tree/branch (TreeRpc.handleBranch).
func (a *treeAPI) branch(ctx *fasthttp.RequestCtx, method string) *treeError {
	if method != fasthttp.MethodGet {
		return errTreeMethod
	}
	treeID, e := treeIDParam(ctx, false)
	if e != nil {
		return e
	}
	var id []byte
	if h := string(ctx.QueryArgs().Peek("branch")); h != "" {
		var err error
		if id, err = tree.ParseBranchID(h); err != nil {
			return a.fromStore(ctx, err)
		}
	} else {
		if treeID < 1 {
			return treeBad("Missing or invalid branch and tree IDs")
		}
		var err error
		if id, err = tree.IDBytes(treeID); err != nil {
			return treeBad("Missing or invalid tree ID")
		}
	}
	b, err := a.store.Branch(ctx, id)
	if errors.Is(err, tree.ErrNotFound) {
		return &treeError{code: fasthttp.StatusNotFound, message: "Unable to locate branch '" +
			strings.ToUpper(hex.EncodeToString(id)) + "' for tree '" + strconv.Itoa(tree.IDOf(id)) + "'"}
	}
	if err != nil {
		return a.fromStore(ctx, err)
	}
	a.nameLeaves(ctx, b)
	writeJSON(ctx, fasthttp.StatusOK, b.AppendJSON(nil))
	return nil
}

// nameLeaves resolves each leaf's metric and tags from its TSUID; a leaf
// with a UID that has no name is left out, as OpenTSDB leaves it out.
func (a *treeAPI) nameLeaves(ctx context.Context, b *tree.Branch) {
	if a.svc == nil || b.Leaves == nil {
		return
	}
	kept := b.Leaves[:0]
	for _, l := range b.Leaves {
		if a.nameLeaf(ctx, l) == nil {
			kept = append(kept, l)
		}
	}
	b.Leaves = kept
}

func (a *treeAPI) nameLeaf(ctx context.Context, l *tree.Leaf) error {
	tsuid, err := a.svc.ParseTSUID(l.TSUID)
	if err != nil {
		return err
	}
	uids := a.svc.UIDs()
	kind := uid.Metric
	var tagk string
	l.Tags = map[string]string{}
	for len(tsuid) > 0 {
		id, rest, err := uid.ParseID(tsuid, uids.Width(kind))
		if err != nil {
			return err
		}
		name, err := uids.Name(ctx, kind, id)
		if err != nil {
			return err
		}
		switch kind {
		case uid.Metric:
			l.Metric, kind = name, uid.TagK
		case uid.TagK:
			tagk, kind = name, uid.TagV
		default:
			l.Tags[tagk], kind = name, uid.TagK
		}
		tsuid = rest
	}
	return nil
}

// rule serves /api/tree/rule (TreeRpc.handleRule).
func (a *treeAPI) rule(ctx *fasthttp.RequestCtx, method string) *treeError {
	raw, ok := a.body(ctx)
	if !ok {
		return nil
	}
	var edit *tree.RuleEdit
	if raw != nil {
		var err error
		if edit, err = tree.ParseRuleJSON(raw); err != nil {
			return a.fromStore(ctx, err)
		}
	} else {
		var e *treeError
		if edit, e = ruleFromQuery(ctx); e != nil {
			return e
		}
	}
	t, e := a.loadTree(ctx, edit.TreeID)
	if e != nil {
		return e
	}
	notFound := func() *treeError {
		return &treeError{code: fasthttp.StatusNotFound, message: "Unable to locate rule: " + edit.Rule.String()}
	}
	switch method {
	case fasthttp.MethodGet:
		r := t.Rule(edit.Level, edit.Order)
		if r == nil {
			return notFound()
		}
		writeJSON(ctx, fasthttp.StatusOK, r.AppendJSON(nil))
		return nil
	case fasthttp.MethodPost, fasthttp.MethodPut:
		if a.changing(ctx) {
			return nil
		}
		r, err := a.store.PutRule(ctx, edit, method == fasthttp.MethodPut)
		if err != nil {
			return a.fromStore(ctx, err)
		}
		writeJSON(ctx, fasthttp.StatusOK, r.AppendJSON(nil))
		return nil
	case fasthttp.MethodDelete:
		if a.changing(ctx) {
			return nil
		}
		if t.Rule(edit.Level, edit.Order) == nil {
			return notFound()
		}
		if err := a.store.DeleteRule(ctx, t.ID, edit.Level, edit.Order); err != nil {
			return a.fromStore(ctx, err)
		}
		return &treeError{code: fasthttp.StatusNoContent}
	}
	return errTreeMethod
}

// ruleFromQuery is TreeRpc.parseRule: treeid, level and order required.
func ruleFromQuery(ctx *fasthttp.RequestCtx) (*tree.RuleEdit, *treeError) {
	args := ctx.QueryArgs()
	id, e := treeIDParam(ctx, true)
	if e != nil {
		return nil, e
	}
	edit := &tree.RuleEdit{}
	edit.TreeID = id
	if args.Has("type") {
		t, err := tree.ParseRuleType(string(args.Peek("type")))
		if err != nil {
			return nil, &treeError{code: fasthttp.StatusBadRequest, message: "Unable to parse the 'type' parameter", details: err.Error()}
		}
		edit.Type = t
		edit.Mark("type", true)
	}
	for q, field := range map[string]string{"field": "field", "custom_field": "customField", "regex": "regex",
		"separator": "separator", "description": "description", "notes": "notes", "display_format": "displayFormat"} {
		if args.Has(q) {
			if err := edit.SetString(field, string(args.Peek(q))); err != nil {
				return nil, &treeError{code: fasthttp.StatusBadRequest, message: "Unable to parse the '" + q + "' parameter", details: err.Error()}
			}
		}
	}
	num := func(name string, required bool, dst *int) *treeError {
		v := string(args.Peek(name))
		if v == "" {
			if required {
				return treeBad("Missing parameter <code>" + name + "</code>")
			}
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return treeBad("Unable to parse the '" + name + "' parameter")
		}
		*dst = n
		return nil
	}
	if e := num("regex_group_idx", false, &edit.RegexGroupIdx); e != nil {
		return nil, e
	}
	edit.Mark("regexGroupIdx", edit.RegexGroupIdx != 0)
	if e := num("level", true, &edit.Level); e != nil {
		return nil, e
	}
	if edit.Level < 0 {
		return nil, treeBad("Negative levels are not allowed")
	}
	edit.Mark("level", edit.Level != 0)
	if e := num("order", true, &edit.Order); e != nil {
		return nil, e
	}
	edit.Mark("order", edit.Order != 0)
	return edit, nil
}

// rules serves /api/tree/rules (TreeRpc.handleRules): POST merges each
// rule, PUT replaces the tree's rules, DELETE removes them all.
func (a *treeAPI) rules(ctx *fasthttp.RequestCtx, method string) *treeError {
	raw, ok := a.body(ctx)
	if !ok {
		return nil
	}
	var edits []*tree.RuleEdit
	var id int
	if raw != nil {
		var err error
		if edits, err = tree.ParseRulesJSON(raw); err != nil {
			return a.fromStore(ctx, err)
		}
		if len(edits) == 0 {
			return treeBad("Missing tree rules")
		}
		id = edits[0].TreeID
		for _, e := range edits {
			if e.TreeID != id {
				return treeBad("All rules must belong to the same tree")
			}
		}
	} else {
		var e *treeError
		if id, e = treeIDParam(ctx, false); e != nil {
			return e
		}
	}
	if _, e := a.loadTree(ctx, id); e != nil {
		return e
	}
	switch method {
	case fasthttp.MethodPost, fasthttp.MethodPut:
		if a.changing(ctx) {
			return nil
		}
		if len(edits) == 0 {
			return treeBad("Missing tree rules")
		}
		if method == fasthttp.MethodPut {
			if err := a.store.DeleteRules(ctx, id); err != nil {
				return a.fromStore(ctx, err)
			}
		}
		for _, e := range edits {
			if _, err := a.store.PutRule(ctx, e, method == fasthttp.MethodPut); err != nil && !errors.Is(err, tree.ErrNoChange) {
				return a.fromStore(ctx, err)
			}
		}
		return &treeError{code: fasthttp.StatusNoContent}
	case fasthttp.MethodDelete:
		if a.changing(ctx) {
			return nil
		}
		if err := a.store.DeleteRules(ctx, id); err != nil {
			return a.fromStore(ctx, err)
		}
		return &treeError{code: fasthttp.StatusNoContent}
	}
	return errTreeMethod
}

// tsuidList is the request of /test, /collisions and /notmatched: a tree
// id and TSUIDs, from the body or from treeid and tsuids (a comma list).
func (a *treeAPI) tsuidList(ctx *fasthttp.RequestCtx) (id int, tsuids []string, e *treeError) {
	raw, ok := a.body(ctx)
	if !ok {
		return 0, nil, &treeError{}
	}
	if raw == nil {
		if id, e = treeIDParam(ctx, true); e != nil {
			return 0, nil, e
		}
		if ctx.QueryArgs().Has("tsuids") {
			tsuids = strings.Split(string(ctx.QueryArgs().Peek("tsuids")), ",")
		}
		return id, tsuids, nil
	}
	var v struct {
		TreeID json.RawMessage `json:"treeId"`
		TSUIDs json.RawMessage `json:"tsuids"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, nil, treeBad("Unable to parse the given JSON")
	}
	if err := json.Unmarshal(v.TreeID, &id); err != nil || id == 0 {
		return 0, nil, treeBad("Missing or invalid Tree ID")
	}
	if len(v.TSUIDs) > 0 && string(v.TSUIDs) != "null" {
		if err := json.Unmarshal(v.TSUIDs, &tsuids); err != nil {
			return 0, nil, treeBad("Unable to convert the given data to a list")
		}
	}
	return id, tsuids, nil
}

// test serves /api/tree/test (TreeRpc.handleTest): each TSUID's TSMeta run
// through the tree's rules without writing, with the messages.
func (a *treeAPI) test(ctx *fasthttp.RequestCtx, method string) *treeError {
	id, tsuids, e := a.tsuidList(ctx)
	if e != nil {
		return e.orNone()
	}
	t, e := a.loadTree(ctx, id)
	if e != nil {
		return e
	}
	if len(tsuids) == 0 {
		return treeBad("Missing or empty TSUID list")
	}
	if method == fasthttp.MethodDelete {
		return errTreeMethod
	}
	out := []byte{'{'}
	for i, h := range tsuids {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(jsonw.Jackson.AppendString(out, h), ':')
		var e *treeError
		if out, e = a.testOne(ctx, out, t, h); e != nil {
			return e
		}
	}
	writeJSON(ctx, fasthttp.StatusOK, append(out, '}'))
	return nil
}

func (a *treeAPI) testOne(ctx *fasthttp.RequestCtx, out []byte, t *tree.Tree, h string) ([]byte, *treeError) {
	unknown := func(msg string) []byte {
		out = append(out, `{"branch":null,"meta":null,"messages":[`...)
		return append(jsonw.Jackson.AppendString(out, msg), "]}"...)
	}
	if a.svc == nil {
		return unknown("Unable to locate TSUID meta data"), nil
	}
	tsuid, err := a.svc.ParseTSUID(h)
	if err != nil {
		return nil, &treeError{code: fasthttp.StatusBadRequest, message: "Unable to parse the TSUID", details: err.Error()}
	}
	m, err := a.svc.GetTSMeta(ctx, tsuid)
	switch {
	case errors.Is(err, lookup.ErrNoTSMeta):
		return unknown("Unable to locate TSUID meta data"), nil
	case errors.Is(err, lookup.ErrUnknownUID):
		return unknown("TSUID was missing a UID name: " + causeText(err, lookup.ErrUnknownUID)), nil
	case err != nil:
		return nil, a.fromStore(ctx, err)
	}
	res := tree.Build(t, TreeMetaOf(m))
	out = res.Root.AppendJSON(append(out, `{"branch":`...))
	out = appendTSMeta(append(out, `,"meta":`...), m)
	out = append(out, `,"messages":[`...)
	for i, msg := range res.Messages {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonw.Jackson.AppendString(out, msg)
	}
	return append(out, "]}"...), nil
}

// orNone is e, or nil when e only says the answer was written.
func (e *treeError) orNone() *treeError {
	if e.code == 0 {
		return nil
	}
	return e
}

// failures serves /api/tree/collisions and /api/tree/notmatched.
func (a *treeAPI) failures(ctx *fasthttp.RequestCtx, method string, collisions bool) *treeError {
	id, tsuids, e := a.tsuidList(ctx)
	if e != nil {
		return e.orNone()
	}
	if _, e := a.loadTree(ctx, id); e != nil {
		return e
	}
	if method == fasthttp.MethodDelete {
		return errTreeMethod
	}
	read := a.store.NotMatched
	if collisions {
		read = a.store.Collisions
	}
	m, err := read(ctx, id, tsuids)
	if err != nil {
		return a.fromStore(ctx, err)
	}
	out := jsonw.Jackson.AppendSortedMap(nil, m)
	writeJSON(ctx, fasthttp.StatusOK, out)
	return nil
}

// TreeMetaOf is what a tree's rules read of a series' TSMeta.
func TreeMetaOf(m *lookup.TSMeta) *tree.Meta {
	tm := &tree.Meta{TSUID: m.TSUIDHex, Metric: tree.Name{Name: m.Metric.Name, Custom: m.Metric.Custom}}
	for i := 0; i+1 < len(m.Tags); i += 2 {
		k, v := &m.Tags[i], &m.Tags[i+1]
		tm.Tags = append(tm.Tags, tree.Tag{K: tree.Name{Name: k.Name, Custom: k.Custom}, V: tree.Name{Name: v.Name, Custom: v.Custom}})
	}
	return tm
}

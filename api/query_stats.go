package api

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/auth"
	"github.com/tsd-db/tsd/internal/jsonw"
)

// maxCompletedQueries is how many finished queries /api/stats/query
// keeps, OpenTSDB's QueryStats.COMPLETED_QUERY_CACHE_SIZE: the oldest
// goes when another finishes.
const maxCompletedQueries = 256

// maxCompletedBytes bounds the completed list's query texts too, since a
// query may be as long as a request body: the oldest go first.
const maxCompletedBytes = 16 << 20

// queryLog holds the OpenTSDB queries running now and the last
// maxCompletedQueries that finished, for /api/stats/query. A query runs
// from the moment it holds its first slot until its answer has reached
// the connection or failed: a streamed answer stays running between its
// parts, while it holds no slot (api/answer).
type queryLog struct {
	mu        sync.Mutex
	nextID    uint64
	running   map[uint64]*queryRun
	completed []*queryRun // oldest first, at most maxCompletedQueries
	bytes     int         // the completed queries' texts
}

// queryRun is one query's entry: set up by start, finished by end, read
// only under queryLog.mu once listed.
type queryRun struct {
	id      uint64
	query   []byte // the TSQuery echo (opentsdb.AppendQueryJSON)
	remote  string
	user    string // "" without access control: null
	headers []header
	start   time.Time

	// Set when the query ends.
	status          int
	exception       string // "null" when it succeeded, as OpenTSDB writes it
	executed        int    // times this query, remote and status finished
	completedMs     int64
	preWrite, total time.Duration
	sent            bool // the whole answer reached the connection
}

// start lists a query as running and returns its entry.
func (l *queryLog) start(ctx *fasthttp.RequestCtx, query []byte, user string) *queryRun {
	r := &queryRun{query: query, remote: "/" + ctx.RemoteAddr().String(), user: user,
		headers: printableHeaders(ctx), start: time.Now(), executed: 1}
	l.mu.Lock()
	l.nextID++
	r.id = l.nextID
	if l.running == nil {
		l.running = make(map[uint64]*queryRun)
	}
	l.running[r.id] = r
	l.mu.Unlock()
	return r
}

// end moves r to the completed list with its outcome. As OpenTSDB's
// markSerialized, a query that finished before from the same remote
// address with the same status only counts one more execution.
func (l *queryLog) end(r *queryRun, status int, err error, sent bool) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.running[r.id]; !ok {
		return // ended already
	}
	delete(l.running, r.id)
	r.status, r.sent, r.completedMs = status, sent, now.UnixMilli()
	r.total = now.Sub(r.start)
	if r.preWrite == 0 {
		r.preWrite = r.total
	}
	r.exception = "null"
	if err != nil {
		r.exception = err.Error()
	}
	for _, old := range l.completed {
		if old.status == status && old.remote == r.remote && bytes.Equal(old.query, r.query) {
			old.executed++
			return
		}
	}
	l.completed = append(l.completed, r)
	l.bytes += len(r.query)
	for len(l.completed) > maxCompletedQueries || (l.bytes > maxCompletedBytes && len(l.completed) > 1) {
		l.bytes -= len(l.completed[0].query)
		l.completed[0] = nil
		l.completed = l.completed[1:]
	}
}

// wrote notes that r's first part is made (OpenTSDB's
// processingPreWriteTime).
func (l *queryLog) wrote(r *queryRun) {
	l.mu.Lock()
	if r.preWrite == 0 {
		r.preWrite = time.Since(r.start)
	}
	l.mu.Unlock()
}

// printableHeaders are the request's headers as OpenTSDB's
// getPrintableHeaders gives them: repeated ones joined by commas, the
// cookie hidden; tsd hides Authorization too, which holds a password
// under access control.
func printableHeaders(ctx *fasthttp.RequestCtx) []header {
	var hs []header
	for k, v := range ctx.Request.Header.All() {
		name, value := string(k), string(v)
		if bytes.EqualFold(k, []byte("cookie")) || bytes.EqualFold(k, []byte("authorization")) {
			value = "*******"
		}
		if i := slices.IndexFunc(hs, func(h header) bool { return h.Key == name }); i >= 0 {
			hs[i].Value += "," + value
			continue
		}
		hs = append(hs, header{Key: name, Value: value})
	}
	slices.SortFunc(hs, func(a, b header) int { return strings.Compare(a.Key, b.Key) })
	return hs
}

// header is one request header as /api/stats/query lists it.
type header struct{ Key, Value string }

// appendJSON appends /api/stats/query's answer, OpenTSDB's
// getRunningAndCompleteStats: {"completed":[...],"running":[...]}, the
// running oldest first, the completed newest first.
func (l *queryLog) appendJSON(dst []byte, now time.Time) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	dst = append(dst, `{"completed":[`...)
	for i := len(l.completed) - 1; i >= 0; i-- {
		if i < len(l.completed)-1 {
			dst = append(dst, ',')
		}
		dst = l.completed[i].appendCompleted(dst, len(l.running))
	}
	dst = append(dst, `],"running":[`...)
	ids := make([]uint64, 0, len(l.running))
	for id := range l.running {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = l.running[id].appendRunning(dst, now)
	}
	return append(dst, "]}"...)
}

// appendRunning appends a running query as OpenTSDB's map of it, in the
// order its HashMap iterates.
func (r *queryRun) appendRunning(dst []byte, now time.Time) []byte {
	dst = append(dst, `{"elapsed":`...)
	dst = jsonw.AppendJacksonDouble(dst, msOf(now.Sub(r.start)))
	dst = appendHeaders(append(dst, `,"headers":`...), r.headers)
	dst = append(append(dst, `,"query":`...), r.query...)
	dst = strconv.AppendInt(append(dst, `,"queryStart":`...), r.start.UnixMilli(), 10)
	dst = jsonw.Jackson.AppendString(append(dst, `,"remote":`...), r.remote)
	dst = jsonw.Jackson.AppendNullable(append(dst, `,"user":`...), r.user)
	return append(dst, '}')
}

// appendCompleted appends a finished query as Jackson writes OpenTSDB's
// QueryStats bean, plus "remote" (the bean has no getter for it).
func (r *queryRun) appendCompleted(dst []byte, running int) []byte {
	dst = append(append(dst, `{"query":`...), r.query...)
	dst = jsonw.Jackson.AppendString(append(dst, `,"exception":`...), r.exception)
	dst = strconv.AppendInt(append(dst, `,"executed":`...), int64(r.executed), 10)
	dst = jsonw.Jackson.AppendNullable(append(dst, `,"user":`...), r.user)
	dst = appendHeaders(append(dst, `,"requestHeaders":`...), r.headers)
	dst = strconv.AppendInt(append(dst, `,"numRunningQueries":`...), int64(running), 10)
	dst = strconv.AppendInt(append(dst, `,"httpResponse":{"code":`...), int64(r.status), 10)
	dst = jsonw.Jackson.AppendString(append(dst, `,"reasonPhrase":`...), fasthttp.StatusMessage(r.status))
	dst = strconv.AppendInt(append(dst, `},"queryStartTimestamp":`...), r.start.UnixMilli(), 10)
	dst = strconv.AppendInt(append(dst, `,"queryCompletedTimestamp":`...), r.completedMs, 10)
	dst = strconv.AppendBool(append(dst, `,"sentToClient":`...), r.sent)
	dst = jsonw.AppendJacksonDouble(append(dst, `,"stats":{"processingPreWriteTime":`...), msOf(r.preWrite))
	dst = jsonw.AppendJacksonDouble(append(dst, `,"totalTime":`...), msOf(r.total))
	dst = jsonw.Jackson.AppendString(append(dst, `},"remote":`...), r.remote)
	return append(dst, '}')
}

// msOf is OpenTSDB's DateTime.msFromNano: milliseconds as a double.
func msOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func appendHeaders(dst []byte, hs []header) []byte {
	dst = append(dst, '{')
	for i, h := range hs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.Jackson.AppendPair(dst, h.Key, h.Value)
	}
	return append(dst, '}')
}

// handleStatsQuery is /api/stats/query.
func (a *metaAPI) handleStatsQuery(ctx *fasthttp.RequestCtx) {
	writeJSON(ctx, fasthttp.StatusOK, a.s.qlog.appendJSON(nil, time.Now()))
}

// errStatus is the status an OpenTSDB query failing with err answers.
func errStatus(err error) int {
	if err == nil {
		return fasthttp.StatusOK
	}
	code, _, _ := queryErrorFields(err)
	return code
}

// requestUser is the user access control identified, "" for none.
func requestUser(ctx *fasthttp.RequestCtx) string {
	id, _ := ctx.UserValue(identityKey{}).(auth.Identity)
	return id.User
}

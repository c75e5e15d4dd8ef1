package api

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/api/admit"
	"github.com/tsd-db/tsd/api/answer"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/query/opentsdb"
)

// answerCounts count what became of query answers and their
// connections.
type answerCounts struct {
	writeTimeouts atomic.Int64 // connections closed by the write deadline
	outputRefused atomic.Int64 // OpenTSDB answers over the output limit before their first byte (413)
	outputAborted atomic.Int64 // answers cut short by the output limit
	cut           atomic.Int64 // answers cut short by another failure
}

// AnswerStats are the counters of query admission (api/admit: slots and
// queue, shared by OpenTSDB's and PromQL's queries) and of answers.
type AnswerStats struct {
	admit.Stats
	// WriteTimeouts counts connections, HTTP or telnet, closed because the
	// client did not take a reply within Options.WriteTimeout at
	// Options.MinWriteRate.
	WriteTimeouts int64
	// OutputRefused counts OpenTSDB queries answered 413 because their
	// answer was over tsd.query.limits.output_points before its first
	// byte; OutputAborted those cut short by it while streaming.
	OutputRefused, OutputAborted int64
	// Cut counts streamed answers cut short by any other failure (a
	// timeout, the store, the server closing).
	Cut int64
}

// AnswerStats returns the counters; it is safe for concurrent use.
func (s *Server) AnswerStats() AnswerStats {
	return AnswerStats{Stats: s.queries.Stats(), WriteTimeouts: s.answers.writeTimeouts.Load(),
		OutputRefused: s.answers.outputRefused.Load(), OutputAborted: s.answers.outputAborted.Load(),
		Cut: s.answers.cut.Load()}
}

// admitQuery takes a query slot for an OpenTSDB endpoint, waiting in the
// queue at most the query timeout; false when it answered 503 with
// Retry-After instead: the queue is full, or the wait ran out.
func (s *Server) admitQuery(ctx *fasthttp.RequestCtx) bool {
	err := s.queries.AcquireWithin(s.work, s.queryTimeout())
	if err == nil {
		return true
	}
	msg := "Too many queries are running; retry later"
	if !errors.Is(err, admit.ErrOverloaded) {
		msg = "Timed out waiting to run the query; retry later"
	}
	writeError(ctx, fasthttp.StatusServiceUnavailable, msg,
		"tsd.query.max_concurrent queries are running and up to tsd.query.max_queued wait")
	ctx.Response.Header.Set("Retry-After", retryAfterSeconds)
	return false
}

// queryTimeout is the OpenTSDB engine's timeout, which also bounds a
// query's wait for a slot.
func (s *Server) queryTimeout() time.Duration {
	if s.opts.Query == nil {
		return 0
	}
	return s.opts.Query.Options().Timeout
}

// openTSDBAnswer returns how an OpenTSDB endpoint's answer is written:
// JSON, gzipped when asked (/api/query, as before), ?jsonp honoured, and
// a streamed answer cut short ending with OpenTSDB's error object.
func (s *Server) openTSDBAnswer(ctx *fasthttp.RequestCtx, gzip bool) answer.Options {
	client, path := ratelog.Client(ctx.RemoteAddr()), string(ctx.Path())
	return answer.Options{Context: s.work, Limiter: s.queries, ContentType: contentTypeJSON,
		Gzip: gzip, MinGzip: answer.MinGzip, JSONP: jsonpOf(ctx), Cut: appendCutError,
		Failed: func(err error) { s.answerCut(client, path, err) }}
}

// appendCutError appends, on a line of its own, OpenTSDB's error object
// for an answer cut short by err: the JSON before it is unfinished, so no
// parser takes the answer for a whole one, and a reader sees why.
func appendCutError(dst []byte, err error) []byte {
	code, msg, details := queryErrorFields(err)
	return appendError(append(dst, '\n'), code, msg, details)
}

// answerCut counts and logs a streamed answer cut short by err.
func (s *Server) answerCut(client, path string, err error) {
	if errors.Is(err, opentsdb.ErrOutputLimit) {
		s.answers.outputAborted.Add(1)
		s.rlog.Warn("query.output_limit", client, "answer cut short: it passed the output limit",
			"path", path, "err", err)
		return
	}
	s.answers.cut.Add(1)
	s.rlog.Warn("query.cut", client, "answer cut short", "path", path, "err", err)
}

// queryFailed answers an OpenTSDB query that failed before its first
// byte, counting an output limit.
func (s *Server) queryFailed(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, opentsdb.ErrOutputLimit) {
		s.answers.outputRefused.Add(1)
	}
	writeQueryError(ctx, err)
}

// streamSource is an /api/query answer made by a opentsdb.Stream.
type streamSource struct{ st *opentsdb.Stream }

func (q streamSource) Next(ctx context.Context, dst []byte, max int) ([]byte, bool, error) {
	return q.st.AppendJSON(ctx, dst, max)
}

func (q streamSource) Close() { q.st.Close() }

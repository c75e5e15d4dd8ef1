package opentsdb

import (
	"context"
	"time"

	"github.com/tsd-db/tsd/query/tsquery"
)

// Stream is a query answered as it is written: each AppendJSON call
// produces the answer's next bytes, running the query a group at a time,
// so the answer never exists whole. Between calls it holds its executor's
// state: the groups not yet answered of the current sub-query (downsampled
// buckets, or for raw points the rows still encoded, see lazyRead) and
// the group being written. A query with delete, showStats or showSummary
// runs whole on the first call, as Execute runs it, and is then written
// in parts. A Stream is not safe for concurrent use; Close it when done.
type Stream struct {
	e    *Engine
	x    *executor
	q    *tsquery.TSQuery
	res  *Result
	r    run
	o    JSONOptions
	w    groupWriter
	g    int           // the group of res being written
	n    int           // groups written
	used time.Duration // time spent running, against Options.Timeout
	// ctx is the context Stream made, kept for the first AppendJSON, which
	// follows at once; later calls make their own with the time left.
	ctx    context.Context
	cancel context.CancelFunc
	calls  int  // running's calls so far
	open   bool // the array's '[' is written
	sep    bool // the ',' before group g is written
	done   bool
}

// Stream validates q and resolves its sub-queries, so that a request's
// faults (400), a plan over the output limit (413) and the global
// annotations' read come before the first byte; the rest runs in
// AppendJSON. ctx bounds this call and the first AppendJSON, which is
// expected at once.
func (e *Engine) Stream(ctx context.Context, q *tsquery.TSQuery, o JSONOptions) (*Stream, error) {
	if err := e.validate(q); err != nil {
		return nil, err
	}
	s := &Stream{e: e, x: e.execs.Get().(*executor), q: q, res: getResult(q), o: o, ctx: ctx}
	if e.opts.Timeout > 0 {
		s.ctx, s.cancel = context.WithTimeoutCause(ctx, e.opts.Timeout, &TimeoutError{Timeout: e.opts.Timeout})
	}
	err := s.running(ctx, func(ctx context.Context) error {
		var err error
		s.r, err = s.x.start(ctx, q, s.res)
		return err
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// AppendJSON appends the answer's next bytes to dst, at least up to max
// bytes unless the answer ends first (done), and returns dst. It stops
// after a whole element: a point, an annotation, a TSUID, a group's
// header. The run's time across calls is bounded by Options.Timeout; the
// time between calls (the caller writing) is not counted. Errors are
// Execute's; after one, the Stream is only to be closed.
func (s *Stream) AppendJSON(ctx context.Context, dst []byte, max int) (out []byte, done bool, err error) {
	if s.done {
		return dst, true, nil
	}
	err = s.running(ctx, func(ctx context.Context) error {
		dst, err = s.appendJSON(ctx, dst, max)
		return err
	})
	return dst, s.done, err
}

// appendJSON is AppendJSON under the run's context.
func (s *Stream) appendJSON(ctx context.Context, dst []byte, max int) ([]byte, error) {
	if !s.open {
		dst, s.open = append(dst, '['), true
		if s.r.eager {
			if err := s.runAll(ctx); err != nil {
				return dst, err
			}
		}
	}
	for len(dst) < max {
		if s.g < len(s.res.Groups) {
			if s.n > 0 && !s.sep {
				dst, s.sep = append(dst, ','), true
			}
			dst = s.res.appendGroupPart(dst, s.g, &s.w, s.o, max)
			if s.w.phase == wDone {
				s.g, s.n, s.w, s.sep = s.g+1, s.n+1, groupWriter{}, false
			}
			continue
		}
		more, err := s.produce(ctx)
		if err != nil {
			return dst, err
		}
		if !more {
			s.done = true
			return s.res.appendEnd(dst, s.n > 0), nil
		}
	}
	return dst, nil
}

// produce replaces the groups written with the run's next one; false when
// there is none.
func (s *Stream) produce(ctx context.Context) (bool, error) {
	if s.r.eager {
		return false, nil // runAll made every group
	}
	s.res.dropGroups()
	s.g = 0
	more, err := s.x.next(ctx, &s.r, s.res)
	if err != nil || !more {
		return false, err
	}
	s.res.finish()
	return true, nil
}

// runAll runs every group of an eager query into s.res.
func (s *Stream) runAll(ctx context.Context) error {
	for {
		more, err := s.x.next(ctx, &s.r, s.res)
		if err != nil || !more {
			s.res.finish()
			return err
		}
	}
}

// running runs fn under the query's remaining time and classifies its
// error as Execute does. Stream and the first AppendJSON, which follows
// at once, run under the context Stream made (ctx is ignored); each later
// call under ctx bounded by the time left.
func (s *Stream) running(ctx context.Context, fn func(context.Context) error) error {
	timeout := s.e.opts.Timeout
	switch {
	case s.calls < 2:
		ctx = s.ctx
		if s.calls == 1 {
			defer s.dropContext()
		}
	case timeout > 0:
		left := timeout - s.used
		if left <= 0 {
			return &TimeoutError{Timeout: timeout}
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, left, &TimeoutError{Timeout: timeout})
		defer cancel()
	}
	s.calls++
	began := time.Now()
	err := fn(ctx)
	s.used += time.Since(began)
	if err != nil {
		return s.e.classify(ctx, s.q, err)
	}
	return nil
}

// dropContext releases the context Stream made.
func (s *Stream) dropContext() {
	if s.cancel != nil {
		s.cancel()
	}
	s.ctx, s.cancel = nil, nil
}

// Close releases the query's memory; the Stream must not be used after.
// It is safe to call more than once.
func (s *Stream) Close() {
	if s.x == nil {
		return
	}
	s.dropContext()
	s.e.putExecutor(s.x)
	s.res.Release()
	s.x, s.res = nil, nil
}

package api

import (
	"errors"
	"sync"

	"github.com/tsd-db/tsd/ingest/influx"
	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/promrw"
	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/ingest/service"
)

// ingestBatchPoints is how many points a streamed body (/api/put, /write,
// /api/v2/write) adds before it commits them, so that a long body holds a
// bounded batch in the head's appender, not all its points.
const ingestBatchPoints = 4096

// pool is a sync.Pool of Ts that makes a fresh one when it is empty.
type pool[T any] struct {
	sync.Pool
	fresh func() T
}

func (p *pool[T]) get() T {
	if v, ok := p.Get().(T); ok {
		return v
	}
	return p.fresh()
}

// initDecoders says how each protocol's pooled decoders are made, with
// the writer's options.
func (a *ingestAPI) initDecoders() {
	o := a.w.Options()
	a.putDecs.fresh = func() *putjson.Decoder {
		d, _ := putjson.NewDecoder(&putjson.Options{MaxTags: o.MaxTags, AllowSpecialChars: o.AllowSpecialChars})
		return d
	}
	a.lpDecs.fresh = func() *influx.Decoder {
		d, _ := influx.NewDecoder(&influx.Options{MaxTags: o.MaxTags, Separator: o.InfluxSeparator})
		return d
	}
	a.rwDecs.fresh = func() *promrw.Decoder {
		// Names read only for series the session does not know by their
		// labels' bytes (drain).
		d, _ := promrw.NewDecoder(&promrw.Options{MaxTags: o.MaxTags, LazyNames: true})
		return d
	}
}

// tally is one protocol's account of a body drained into a session: it
// counts the outcomes and keeps the messages its answer quotes, in the
// protocol's own shape.
type tally interface {
	// refused is an element the decoder refused, already counted bad by
	// the session.
	refused(err error)
	// added is Session.Add's answer for a decoded point.
	added(err error)
	// committed is a commit's answer for n points.
	committed(n int, err error)
}

// drain adds dec's points to sess until dec stops, telling t of every
// element and commit, and commits whenever batch points are pending
// (never when batch is 0). It returns what stopped dec, nil at the body's
// end; the points added since the last commit are left pending, for the
// caller to commit or drop as its protocol says. Names are resolved under
// the server's work context, never the fasthttp.RequestCtx: a context
// derived from that reads fasthttp's shutdown state while Close writes it
// (a data race), and costs a goroutine per derived context.
func (a *ingestAPI) drain(dec parse.Decoder, sess *service.Session, batch int, t tally) error {
	lazy, _ := dec.(parse.NamesDecoder)
	for dec.Next() {
		if err := dec.Bad(); err != nil {
			sess.CountBadErr(err)
			t.refused(err)
			continue
		}
		p := dec.Point()
		if ok, err := sess.AddKnown(p); ok {
			t.added(err)
		} else if err := readNames(lazy, p); err != nil {
			if dec.Err() != nil {
				break
			}
			sess.CountBadErr(err)
			t.refused(err)
			continue
		} else {
			t.added(sess.Add(a.s.work, p))
		}
		if batch > 0 && sess.Pending() >= batch {
			commitPending(sess, t)
		}
	}
	return dec.Err()
}

// readNames reads a point's names when its decoder left them for later
// (Point.Key set by a parse.NamesDecoder): nil, or the series' refusal,
// or the body's error (dec.Err).
func readNames(dec parse.NamesDecoder, p *parse.Point) error {
	if p.Key == nil || dec == nil {
		return nil
	}
	return dec.ParseNames()
}

// commitPending commits sess's pending points and tells t.
func commitPending(sess *service.Session, t tally) {
	n := sess.Pending()
	t.committed(n, sess.Commit(false))
}

// maxBadMessages bounds the bad points an Influx or remote-write error
// quotes.
const maxBadMessages = 10

// pointCount is the tally of an Influx or remote-write body: the points
// written (counted as their commits succeed), refused as bad data (the
// first maxBadMessages messages kept) and throttled, with the last
// throttle's reason.
type pointCount struct {
	written, bad, throttled int
	errs                    []byte // the messages, each ending in "\n"
	throttle                string
	firstErr                string // the first refusal, for the log (ingest_log.go)
}

func (c *pointCount) refused(err error) {
	c.noteErr(err)
	c.bad++
	if c.bad <= maxBadMessages {
		c.errs = append(append(c.errs, err.Error()...), '\n')
	}
}

func (c *pointCount) added(err error) {
	switch {
	case err == nil:
	case errors.Is(err, service.ErrThrottled):
		c.throttled++
		c.throttle = service.ThrottleReason(err)
		c.noteErr(err)
	default:
		c.refused(err)
	}
}

func (c *pointCount) committed(n int, err error) {
	if err != nil {
		c.throttled += n
		c.throttle = service.ThrottleReason(err)
		c.noteErr(err)
		return
	}
	c.written += n
}

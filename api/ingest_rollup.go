package api

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/ingest/putjson"
	"github.com/tsd-db/tsd/ingest/service"
)

// handleRollup is POST /api/rollup, OpenTSDB's RollupDataPointRpc: an
// /api/put body whose points also carry interval, aggregator and
// groupByAggregator, stored at once in the rollup and pre-aggregation
// tables (service.Session.AddRollup). Answers, details and status codes
// are /api/put's; an unknown interval is OpenTSDB's "Unexpected exception".
func (a *ingestAPI) handleRollup(ctx *fasthttp.RequestCtx) {
	if subEndpoint(ctx.Path()) == "rebuild" {
		a.s.handleRollupRebuild(ctx)
		return
	}
	if !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	args := ctx.QueryArgs()
	res := putResult{details: args.Has("details"), rollup: true}
	defer func() { a.logRefused(ctx, ProtocolRollup, res.failed+res.throttled, res.firstErr) }()
	body, ok := a.openPut(ctx, &res)
	if !ok {
		return
	}
	defer a.closePut(body)
	dec := body.dec
	sess := a.w.Session(service.Put)
	defer sess.Release()
	if a.refuseDrained(ctx, body, a.drainRollup(dec, sess, &res), &res) {
		return
	}
	writePutResult(ctx, &res, args.Has("summary"))
}

// drainRollup stores the body's points one by one, with
// RollUpDataPoint.validate's checks before OpenTSDB's addAggregatePoint.
func (a *ingestAPI) drainRollup(dec *putjson.Decoder, sess *service.Session, res *putResult) error {
	for dec.Next() {
		if err := dec.Bad(); err != nil {
			sess.CountBad(1)
			res.refused(err)
			continue
		}
		interval, agg, groupBy, hasGroupBy := dec.RollupFields()
		isGroupBy := len(groupBy) > 0
		switch {
		case len(interval) == 0 && !isGroupBy:
			sess.CountBad(1)
			res.refused(errors.New("Missing interval"))
			continue
		case len(agg) == 0 && !isGroupBy:
			sess.CountBad(1)
			res.refused(errors.New("Missing aggregator"))
			continue
		}
		spec := service.RollupSpec{Interval: interval, Agg: agg, GroupBy: groupBy, IsGroupBy: hasGroupBy,
			RawTimestamp: dec.Timestamp()}
		err := sess.AddRollup(a.s.work, dec.Point(), &spec)
		var re *service.RollupError
		if errors.As(err, &re) && re.NoSuchRollup {
			err = errors.New("Unexpected exception") // a NoSuchElementException to PutDataPointRpc
		}
		res.added(err)
	}
	return dec.Err()
}

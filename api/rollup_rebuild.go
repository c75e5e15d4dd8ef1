package api

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/uid"
)

// RollupRebuildRequest is the body of POST /api/rollup/rebuild: the hours
// holding a second of [Start, End] (Unix seconds) of Metrics (every
// metric when empty).
type RollupRebuildRequest struct {
	Start   int64    `json:"start"`
	End     int64    `json:"end"`
	Metrics []string `json:"metrics"`
}

// RollupRebuildResult is its answer: the job's steps, those a checkpoint
// skipped, the raw rows read, the rollup rows and cells written.
type RollupRebuildResult struct {
	Steps, Skipped, Rows, RollupRows, Cells int64
}

// handleRollupRebuild is POST /api/rollup/rebuild, an operator's route
// (tsd rollup rebuild --url): it runs the rebuild in the daemon and
// answers when it ends, 200 with the counts; a bad body or an unknown
// metric is 400, a failed job 500 (a rerun continues from its
// checkpoint).
func (s *Server) handleRollupRebuild(ctx *fasthttp.RequestCtx) {
	if !ctx.IsPost() {
		writeMethodNotAllowed(ctx)
		return
	}
	if s.opts.RollupRebuild == nil {
		// A setting of this daemon, not a missing feature: 400, as tsd
		// keeps 501 for what OpenTSDB itself does not implement.
		writeError(ctx, fasthttp.StatusBadRequest, "Rollups are not enabled", "set tsd.rollups.enable=true to rebuild rollups")
		return
	}
	var req RollupRebuildRequest
	if err := json.Unmarshal(ctx.PostBody(), &req); err != nil {
		writeError(ctx, fasthttp.StatusBadRequest, "Unable to parse the rebuild request", err.Error())
		return
	}
	if req.Start < 0 || req.End < req.Start {
		writeError(ctx, fasthttp.StatusBadRequest, "Bad time range", "start "+strconv.FormatInt(req.Start, 10)+" end "+strconv.FormatInt(req.End, 10))
		return
	}
	res, err := s.opts.RollupRebuild(ctx, req)
	if errors.Is(err, uid.ErrNoSuchName) {
		writeError(ctx, fasthttp.StatusBadRequest, "No such metric", err.Error())
		return
	}
	if err != nil {
		writeError(ctx, fasthttp.StatusInternalServerError, "Rollup rebuild failed", err.Error())
		return
	}
	b := []byte("{")
	for i, f := range []struct {
		k string
		v int64
	}{{"steps", res.Steps}, {"skipped", res.Skipped}, {"rows", res.Rows}, {"rollupRows", res.RollupRows}, {"cells", res.Cells}} {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(strconv.AppendQuote(b, f.k), ':'), f.v, 10)
	}
	writeJSON(ctx, fasthttp.StatusOK, append(b, '}'))
}

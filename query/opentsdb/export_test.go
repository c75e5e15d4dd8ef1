package opentsdb

// SetFuse turns the fused downsampling read on or off, so tests can
// compare it with the raw-point pipeline.
func SetFuse(e *Engine, on bool) { e.noFuse = !on }

// SetEager makes every query read raw points whole (Read), as delete and
// statistics queries do, instead of group by group, so tests can compare
// the two.
func SetEager(e *Engine, on bool) { e.eager = on }

// StreamHeldPoints is how many points s holds now: its result's and the
// lazy read's group slab.
func StreamHeldPoints(s *Stream) int { return len(s.res.points) + len(s.x.lazy.slab) }

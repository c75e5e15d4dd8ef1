package query

// SetFuse turns the fused downsampling read on or off, so tests can
// compare it with the raw-point pipeline.
func SetFuse(e *Engine, on bool) { e.noFuse = !on }

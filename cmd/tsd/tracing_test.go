package main

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/tsd-db/tsd/internal/invariants"
)

// TestNoTracing: after noTracing, the spans Prometheus's engine opens come
// from the no-op provider and cost no allocation beyond the context.
func TestNoTracing(t *testing.T) {
	noTracing()
	if _, ok := otel.GetTracerProvider().(noop.TracerProvider); !ok {
		t.Fatalf("tracer provider is %T, want noop.TracerProvider", otel.GetTracerProvider())
	}
	if invariants.RaceEnabled {
		return // allocation counts differ under the race detector
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		_, span := otel.Tracer("").Start(ctx, "promql.Exec")
		span.End()
	})
	if allocs > 1 {
		t.Errorf("a span costs %v allocations, want at most 1 (the context)", allocs)
	}
}

// Package promql serves PromQL over tsd: a Prometheus storage.Queryable
// (github.com/prometheus/prometheus/storage) reading the series index, the
// data table and the write path's head, and a promql.Engine with tsd's
// defaults. The Prometheus HTTP API (package api) and the PromQL tests run
// Prometheus's own engine on top of it.
//
// # Mapping
//
// A series' labels are its names: __name__ is the metric and every other
// label a tag, names and values stored losslessly (uid.RulesLossless on the
// Prometheus ingest paths). A label set comes from the series' TSUID, each
// UID named through uid.UIDs.Name, and is cached by TSUID
// (Options.LabelCacheSize); a UID renamed or deleted by another daemon is
// seen once the cache is emptied (DropCaches).
//
// # Select
//
// Label matchers become index.Filters resolved by bitmap algebra
// (index.Index.Postings): an = on __name__ picks the metric's postings,
// other matchers on __name__ filter under index.NameKey, matchers on a tag
// key the index does not know are decided on the empty value. The bitmap is
// narrowed to the series whose index span meets the selected time range,
// and every label set is then checked against the matchers with
// Prometheus's own semantics (dot matches newline, anchored expressions),
// so the index may over-select but never changes a result.
//
// The range read is SelectHints' [Start, End] (the querier's [mint, maxt]
// without hints), clipped to what tsd stores (0 to the row key's last
// second). Each series' samples come from a lazy read.Reader.Iterator: one
// hour row at a time, merged with the head, so the engine's window holds
// only what it evaluates; nothing is read until the engine iterates.
//
// # Values
//
// Samples are float64: integers convert, floats keep their bits, and the
// stored staleness marker (internal/series.StaleNaN) is Prometheus's
// value.StaleNaN. Native histograms are not stored; iterators only return
// chunkenc.ValFloat.
//
// # Limits
//
// Each Querier (one per PromQL query) charges its series and decoded points
// to one read.Budget from Options.Limits; the first limit crossed fails the
// query with a *read.LimitError. NewEngine maps Limits.MaxPoints to the
// engine's max samples.
package promql

// Package series holds the point and series types that the write path
// (ingest) and the readers (query, rollup) share without importing each
// other: a typed point, a point iterator, and the UID widths of series keys.
//
// Invariants: timestamps are int64 milliseconds since the epoch (0 and up;
// the seconds-or-milliseconds guess lives only in the telnet and /api/put
// parsers). A point keeps its type: int64, float32 (a value exact in single
// precision) or float64, whose bits are kept exactly (Prometheus's staleness
// NaN included).
package series

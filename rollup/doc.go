// Package rollup is the pure part of rollups and pre-aggregates: OpenTSDB
// 2.4's rollup configuration, the rollup row's base time and interval
// index, the rollup qualifier and value codec, tsd's cell columns,
// the fold of a series' points into interval cells, and the choice of an
// interval for a query. It does no I/O and imports only rowkey and series
// (and, through rowkey, salt): ingest writes what it folds, query reads
// what it chooses.
//
// # Configuration
//
// ParseConfig reads OpenTSDB's JSON (RollupConfig, RollupInterval):
//
//	{"aggregationIds":{"sum":0,"count":1,"min":2,"max":3},
//	 "intervals":[{"table":"tsdb","preAggregationTable":"tsdb-preagg",
//	               "interval":"1m","rowSpan":"1h","defaultInterval":true}, ...]}
//
// and checks what OpenTSDB checks, each error a *ConfigError naming the
// field: at least one interval and one aggregator; aggregator ids 0..127,
// unique, naming OpenTSDB aggregators; per interval a table, a
// pre-aggregation table, an interval of at least one second and a row
// span <n><unit> with unit h (n 1 or even), d, n (a month) or y (n 1);
// span/interval, counting a month as 32 days and a year as 366, in
// 12..7774, and the interval shorter than the span; interval names unique;
// at most one default interval. tsd also refuses two intervals sharing a
// table. The default interval names raw data (its table is the data
// table); tsd computes cells for the others. DefaultConfigJSON is a new
// store's configuration.
//
// # Rows
//
// A rollup row has the data table's row key (rowkey) with the base time
// snapped to the row span: down to a multiple of the span for hour spans
// (seconds modulo n·3600), to UTC midnight for d, the first of the UTC
// month for n, January 1st UTC for y (Interval.BaseTime). The salt does
// not cover the time, so a series keeps its bucket (SetBaseTime turns a
// raw key into a rollup key). A cell is one interval of one series: its
// index in the row is (t − base) / interval, and it starts at
// base + index·interval.
//
// # OpenTSDB columns (tsd.storage.format=opentsdb)
//
// One column per aggregate and cell, never compacted:
//
//	qualifier  [aggregator id: 1 byte][uint16(index<<4 | flags), big-endian]
//	value      as a raw point: an integer on the fewest of 1, 2, 4, 8 bytes
//	           (flags 0..7), a float on 4 (0xB) or 8 (0xF) bytes
//
// Example: sum (id 0) of the cell at index 2 of a 1h-in-1d row, integer
// 300: qualifier 00 00 21, value 01 2C. The 12 bits of the index bound it
// to MaxIndex (4095): OpenTSDB accepts spans of up to 7774 intervals and
// truncates; tsd refuses to write such an index. Readers also accept
// the legacy qualifier, the lower-case aggregator name and ':' followed by
// a 2-byte qualifier ("sum:" 00 21), and refuse a first byte with the
// high bit set (OpenTSDB's compacted flag, never written).
//
// # Cell columns (tsd.storage.format=dense)
//
// In tsd's own format each cell is one column (AppendCellQualifier,
// AppendCellValue), written whole, so rewriting one hour never touches
// its neighbours and needs no read:
//
//	qualifier  FD ‖ uint16(index), big-endian (3 bytes)
//	value      h (1 byte: kinds of sum, min, max in bits 0-1, 2-3, 4-5:
//	           0 integer, 1 float32, 2 float64; bits 6-7 the Edge:
//	           0 unknown, 1 none, 2 a point) ‖ uvarint count ‖ sum,
//	           min, max: an integer as a zigzag varint, a float32 on 4
//	           bytes, a float64 on 8 ‖ when the Edge is 2, the first
//	           point: its kind (1 byte) and its value coded as sum's
//
// Example: the hour at index 15 holding 100 (at its start) and -300:
// qualifier FD 00 0F, value 80 02 8F 03 D7 04 C8 01 00 C8 01. A finished
// row is one packed column, qualifier FD alone, holding all its cells
// (RowEncoder: 03, the cell count, runs of consecutive indexes, runs of
// cells sharing a header byte and first-point kind, then each cell's
// count, sum, min, max and first point as zigzag varint differences from
// the previous cell's, floats whole); ingest/flush says when it writes
// which. Packed versions 01 and 02, written before, hold the aggregates
// as entropy-coded dense columns and still decode (01 without first
// points: EdgeUnknown). Cell values written before cells kept their first
// point (header bits 6-7 zero) decode with EdgeUnknown too. Readers
// merge every form: a cell column wins over a packed cell of the same
// index, and either over OpenTSDB columns of that index (written through
// /api/rollup into a dense store).
// RowReader.Partial keeps cells of OpenTSDB columns that lack some
// aggregators (Cell.Missing names them), for queries that need only
// those present; the flusher folds only whole cells.
//
// # The fold
//
// A Cell holds count, sum, min and max of a series' points in one
// interval, and its first point: whether a point sits at exactly the
// interval's start and which (Edge, First; PromQL's windows (t−r, t]
// need the point leaving at t−r and the one entering at t). Fold computes the cells of an interval from a row's points
// (sorted, one per timestamp: a decoded row); FoldCells folds cells into
// a longer interval's cells (hours into a day; the day's first point is
// its first hour's when that hour starts the day). The sum stays an exact
// int64 while every input is an integer and it does not overflow, else it
// is a float64 added in time order; min and max keep the kind of the
// point they are; a NaN loses to any number; Prometheus staleness markers
// are not points. A cell is always a function of its inputs, never an
// increment of a stored cell, so recomputing it is idempotent.
//
// # Choosing an interval
//
// Candidates lists the intervals equal to or dividing a downsampler's
// interval, longest first; Choose takes the first unless it is the
// default interval (raw data) or the usage is Raw
// (TsdbQuery.transformDownSamplerToRollupQuery). ParseUsage reads
// rollupUsage names.
//
// # Slices
//
// Parsed qualifiers alias the bytes they were parsed from. Encoders
// append to dst; a reused RowEncoder, RowDecoder and the qualifier codec
// do not allocate.
package rollup

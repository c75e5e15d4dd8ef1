package harness

import (
	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/query/read"
)

// Figures returns the table's rows in order. Each later issue adds its rows
// here (or fills a Missing side) with a Measure calling its package.
func Figures(e *Env) []Figure {
	var fs []Figure
	fs = append(fs, ingestFigures()...)
	fs = append(fs, sizeFigures()...)
	fs = append(fs, queryFigures()...)
	fs = append(fs, rollupQueryFigures()...)
	fs = append(fs, rollupPromFigures()...)
	fs = append(fs, bigtableFigures(e)...)
	fs = append(fs, rollupFigures(e)...)
	// Storage rows last: their preloaded stores stay open until Close, and
	// pebble's background work must not land in CPU-timed rows.
	fs = append(fs, storageFigures(e)...)
	return fs
}

func ingestFigures() []Figure {
	return []Figure{
		{
			Name: "head append, devops int, 1 goroutine", Unit: "samples/s",
			TSD:  Side{Name: "tsd head + WAL, UIDs resolved up front", Measure: tsdAppendRate},
			Peer: Side{Name: "Prometheus tsdb head, WAL on", Measure: promAppendRate},
		},
		{
			Name: "append through names, devops int, 1 goroutine", Unit: "samples/s",
			TSD:  Side{Name: "NameAppender: uid + index + head + WAL", Measure: tsdNamesRate},
			Peer: Side{Name: "Prometheus tsdb head by label set, no refs", Measure: promLabelsRate},
		},
		{
			Name: "parse Influx lines, devops float", Unit: "points/s",
			TSD:  Side{Name: "ingest/influx", Measure: influxTSDRate},
			Peer: Side{Name: "line-protocol/v2", Measure: influxPeerRate},
		},
		{
			Name: "decode remote_write, 1,000 series/request", Unit: "samples/s",
			TSD:  Side{Name: "snappy + ingest/promrw", Measure: remoteWriteTSDRate},
			Peer: Side{Name: "snappy + prompb", Measure: remoteWritePeerRate},
		},
	}
}

func sizeFigures() []Figure {
	return []Figure{
		{
			Name: "data bytes/point, devops int", Unit: "B", LowerIsBetter: true, Once: true,
			TSD:  Side{Name: "dense hour rows", Measure: denseBytes(gen.ValuesInt)},
			Peer: Side{Name: "Prometheus block chunks", Measure: promChunkBytes(gen.ValuesInt)},
		},
		{
			Name: "data bytes/point, devops float", Unit: "B", LowerIsBetter: true, Once: true,
			TSD:  Side{Name: "dense hour rows", Measure: denseBytes(gen.ValuesFloat)},
			Peer: Side{Name: "Prometheus block chunks", Measure: promChunkBytes(gen.ValuesFloat)},
		},
		{
			Name: "decode, devops int", Unit: "points/s",
			TSD:  Side{Name: "DenseIter", Measure: denseDecode(gen.ValuesInt)},
			Peer: Side{Name: "XOR chunk iterator", Measure: xorDecode(gen.ValuesInt)},
		},
		{
			Name: "decode, devops float", Unit: "points/s",
			TSD:  Side{Name: "DenseIter", Measure: denseDecode(gen.ValuesFloat)},
			Peer: Side{Name: "XOR chunk iterator", Measure: xorDecode(gen.ValuesFloat)},
		},
		{
			Name: "disk bytes/point incl. index, devops int", Unit: "B", LowerIsBetter: true, Once: true,
			TSD:  Side{Name: "compacted store: data+index+UID+meta sstables", Measure: tsdDiskBytes(gen.ValuesInt)},
			Peer: Side{Name: "Prometheus block chunks+index", Measure: promBlockBytes(gen.ValuesInt)},
		},
	}
}

func queryFigures() []Figure {
	return []Figure{
		{
			Name: "OpenTSDB /api/query 1 host 1 metric 1 h, 1m-max", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "opentsdb.Engine in process, JSON written", Measure: tsdOpenTSDBQuery("single-1h", stored)},
			Peer: Side{Name: "Prometheus engine, same question in PromQL", Measure: promQuery(0)},
		},
		{
			Name: "OpenTSDB /api/query 1 metric 100 hosts 12 h, 1h-avg by host", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "opentsdb.Engine in process, JSON written", Measure: tsdOpenTSDBQuery("groupby-12h", stored)},
			Peer: Side{Name: "Prometheus engine, same question in PromQL", Measure: promQuery(1)},
		},
		{
			Name: "planner: 10 of the high-card metric's series, 1 h, 1m-max", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "auto plan (per-series Gets)", Measure: highCardQuery(read.PlanAuto)},
			Peer: Side{Name: "same query forced to scan the metric", Measure: highCardQuery(read.PlanScan)},
		},
		{
			Name: "PromQL 1 host 1 metric 1 h, max per minute", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "Prometheus engine on tsd's Queryable", Measure: tsdPromQuery(0, stored)},
			Peer: Side{Name: "Prometheus engine on its block", Measure: promQuery(0)},
		},
		{
			Name: "PromQL 1 metric all hosts 12 h, hourly avg by host", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "Prometheus engine on tsd's Queryable", Measure: tsdPromQuery(1, stored)},
			Peer: Side{Name: "Prometheus engine on its block", Measure: promQuery(1)},
		},
		// The same questions right after a bulk load: every row still in
		// ingest's head, as for the flush grace after the load.
		{
			Name: "OpenTSDB /api/query 1 metric 100 hosts 12 h, 1h-avg by host, rows in the head", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "opentsdb.Engine in process, JSON written", Measure: tsdOpenTSDBQuery("groupby-12h", loadTSDHead)},
			Peer: Side{Name: "Prometheus engine, same question in PromQL", Measure: promQuery(1)},
		},
		{
			Name: "PromQL 1 host 1 metric 1 h, max per minute, rows in the head", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "Prometheus engine on tsd's Queryable", Measure: tsdPromQuery(0, loadTSDHead)},
			Peer: Side{Name: "Prometheus engine on its block", Measure: promQuery(0)},
		},
		{
			Name: "PromQL 1 metric all hosts 12 h, hourly avg by host, rows in the head", Unit: "ms", LowerIsBetter: true,
			TSD:  Side{Name: "Prometheus engine on tsd's Queryable", Measure: tsdPromQuery(1, loadTSDHead)},
			Peer: Side{Name: "Prometheus engine on its block", Measure: promQuery(1)},
		},
	}
}

package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/rollup"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// rollupTotals scans an interval's rollup table and adds up its cells'
// counts and sums, decoding packed rows (dense) or OpenTSDB's columns.
func rollupTotals(t *testing.T, db storage.DB, cfg *rollup.Config, name string) (rows int, count int64, sum float64, quals map[string]string) {
	t.Helper()
	iv, ok := cfg.ByName(name)
	if !ok {
		t.Fatalf("no interval %s", name)
	}
	tbl, err := db.Table(context.Background(), iv.Table)
	if err != nil {
		t.Fatal(err)
	}
	quals = map[string]string{}
	sc := tbl.Scan(context.Background(), &storage.ScanOptions{})
	defer sc.Close()
	var dec rollup.RowDecoder
	for sc.Next() {
		row := sc.Row()
		rows++
		base := int64(row.Key[1+3])<<24 | int64(row.Key[2+3])<<16 | int64(row.Key[3+3])<<8 | int64(row.Key[4+3])
		for _, c := range row.Cells {
			if idx, ok := rollup.ParseCellQualifier(c.Qualifier); ok {
				cl, err := rollup.ParseCellValue(iv.CellStart(base, idx), c.Value)
				if err != nil {
					t.Fatal(err)
				}
				count += cl.Count
				sum += cl.Sum.Float()
				continue
			}
			if string(c.Qualifier) == rollup.PackedQualifier {
				cells, err := dec.Decode(nil, iv, base, c.Value)
				if err != nil {
					t.Fatal(err)
				}
				for _, cl := range cells {
					count += cl.Count
					sum += cl.Sum.Float()
				}
				continue
			}
			pq, p, err := rollup.ParseColumn(iv, base, c.Qualifier, c.Value)
			if err != nil {
				t.Fatal(err)
			}
			quals[hex.EncodeToString(c.Qualifier)] = hex.EncodeToString(c.Value)
			switch cfg.AggName(pq.AggID) {
			case "count":
				count += p.Int()
			case "sum":
				sum += p.Float()
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, count, sum, quals
}

// TestDaemonRollups: a new store gets rollups on by default, computed at
// the shutdown flush into the 1h and 1d tables (dense: packed rows;
// opentsdb: OpenTSDB's columns), the configuration recorded with the
// store; a later start may add an interval but not change one.
func TestDaemonRollups(t *testing.T) {
	t.Parallel() // its own daemon
	for _, format := range []string{"dense", "opentsdb"} {
		t.Run(format, func(t *testing.T) {
			data := t.TempDir()
			d := startDaemon(t, "--data", data, "--tsd.storage.format="+format)
			hour := time.Now().Add(-3 * time.Hour).Truncate(time.Hour).Unix()
			var pts []map[string]any
			var wantSum int64
			for i := range 120 { // two hours, one point a minute, integers
				v := i%7 + 1
				wantSum += int64(v)
				pts = append(pts, map[string]any{"metric": "roll.m", "timestamp": hour + int64(i)*60, "value": v,
					"tags": map[string]string{"host": "a"}})
			}
			d.putJSON(t, pts)
			if err := d.Stop(t); err != nil {
				t.Fatalf("stop: %v\n%s", err, d.Logs)
			}
			db, err := pebble.Open(data, &pebble.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			meta, err := db.Table(context.Background(), schema.DefaultMetaTable)
			if err != nil {
				t.Fatal(err)
			}
			rec, ok, err := schema.ReadRollups(context.Background(), meta)
			if err != nil || !ok {
				t.Fatalf("no rollup record: %v", err)
			}
			cfg, err := rollup.ParseConfig(rec)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := cfg.Extends(rollup.DefaultConfig()); err != nil || len(got) != 0 {
				t.Errorf("recorded config %s is not the default: %v %v", rec, got, err)
			}
			for _, name := range []string{"1h", "1d"} {
				rows, count, sum, quals := rollupTotals(t, db, cfg, name)
				if rows < 1 || count != 120 || sum != float64(wantSum) {
					t.Errorf("%s: %d rows, count %d sum %v, want 120 and %d", name, rows, count, sum, wantSum)
				}
				if format == "opentsdb" && name == "1h" {
					// The count of the first hour: 60 points, on one byte,
					// in the 3-byte qualifier of aggregator 1 at the hour's index.
					idx := (hour % 86400) / 3600
					q := fmt.Sprintf("01%04x", idx<<4)
					if quals[q] != "3c" {
						t.Errorf("opentsdb count column %s = %q, want 3c (columns %v)", q, quals[q], quals)
					}
				}
			}
			db.Close()

			changed := strings.Replace(rollup.DefaultConfigJSON, `"rowSpan":"1n"`, `"rowSpan":"1y"`, 1)
			out, code := runTSD(t, "--port=0", "--tsd.network.bind=127.0.0.1", "--data", data, "--tsd.storage.format="+format,
				"--tsd.rollups.config="+changed)
			if code != exitFailed || !strings.Contains(out, "tsd.rollups.config") || !strings.Contains(out, "interval 1d") {
				t.Errorf("start with a changed interval: exit %d\n%s", code, out)
			}
			added := strings.Replace(rollup.DefaultConfigJSON, `]}`, `,{"table":"tsdb-rollup-10m","preAggregationTable":"tsdb-rollup-preagg-10m","interval":"10m","rowSpan":"1d"}]}`, 1)
			d2 := startDaemon(t, "--data", data, "--tsd.storage.format="+format, "--tsd.rollups.config="+added)
			if !strings.Contains(d2.Logs.String(), "rollup intervals added") {
				t.Errorf("no warning about the added interval:\n%s", d2.Logs)
			}
			if err := d2.Stop(t); err != nil {
				t.Fatalf("restart: %v\n%s", err, d2.Logs)
			}
		})
	}
}

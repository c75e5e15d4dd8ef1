package pebble

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tsd-db/tsd/storage"
)

// bottomFiles returns the compression and filter names of every sstable,
// failing when one is above the bottom level.
func bottomFiles(t *testing.T, d *DB) (compressions, filters []string) {
	t.Helper()
	levels, err := d.pdb.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	for l, files := range levels {
		for _, f := range files {
			if l != len(levels)-1 {
				t.Fatalf("sstable %s in L%d after compaction", f.FileNum, l)
			}
			compressions = append(compressions, f.Properties.CompressionName)
			filters = append(filters, f.Properties.FilterPolicyName)
		}
	}
	return compressions, filters
}

// TestCompactRewritesMovedFiles: pebble moves a lone flushed file into an
// empty bottom level whole, with the upper levels' codec and filter;
// Compact rewrites it with the bottom level's, and its marker deletion
// removes nothing.
func TestCompactRewritesMovedFiles(t *testing.T) {
	ctx := context.Background()
	d, err := Open(t.TempDir(), &Options{GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	spec := storage.TableSpec{Name: "t", Families: []storage.FamilySpec{{Name: "f"}}}
	if err := d.EnsureTable(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tb, err := d.Table(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	const rows = 2000
	row := func(i int) []byte { return fmt.Appendf(nil, "row%05d", i) }
	for i := range rows {
		v := binary.BigEndian.AppendUint64(nil, uint64(i)*0x9E3779B97F4A7C15)
		if err := tb.Put(ctx, row(i), []storage.Cell{{Family: "f", Qualifier: []byte{byte(i)}, Timestamp: int64(i+1) * 1000, Value: v}}); err != nil {
			t.Fatal(err)
		}
	}
	// What a bulk load does: the flush's file moves to the bottom whole.
	if err := d.pdb.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.pdb.Compact(ctx, []byte{0}, []byte{0xFF}, false); err != nil {
		t.Fatal(err)
	}
	before, filters := bottomFiles(t, d)
	if len(before) != 1 || before[0] == bottomProfile.Name || filters[0] == "" {
		t.Fatalf("before Compact: bottom files %v, filters %v; want one moved file with the upper levels' codec and a filter", before, filters)
	}
	if err := d.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	after, filters := bottomFiles(t, d)
	for i := range after {
		if after[i] != bottomProfile.Name || filters[i] != "" {
			t.Fatalf("after Compact: file %d compression %q filter %q, want %q and none", i, after[i], filters[i], bottomProfile.Name)
		}
	}
	sc := tb.Scan(ctx, &storage.ScanOptions{})
	n := 0
	for sc.Next() {
		r := sc.Row()
		want := binary.BigEndian.AppendUint64(nil, uint64(n)*0x9E3779B97F4A7C15)
		if string(r.Key) != string(row(n)) || len(r.Cells) != 1 || string(r.Cells[0].Value) != string(want) {
			t.Fatalf("row %d after Compact = %q %+v", n, r.Key, r.Cells)
		}
		n++
	}
	if err := sc.Close(); err != nil || n != rows {
		t.Fatalf("scan after Compact: %d rows, %v; want %d", n, err, rows)
	}
}

// TestCompactLeavesSettledFiles: a second Compact of a settled store
// rewrites nothing, whatever the codec. Row-block sstables record the
// codec they were written with, Snappy for a profile that uses MinLZ,
// and Compact once took that for a file of another level's options and
// rewrote the whole store on every call.
func TestCompactLeavesSettledFiles(t *testing.T) {
	ctx := context.Background()
	for _, c := range []Compression{CompressionSmall, CompressionFastest} {
		d, err := Open(t.TempDir(), &Options{GCInterval: -1, Compression: c})
		if err != nil {
			t.Fatal(err)
		}
		tb := ensure(t, d, crashSpec)
		for seq := range 300 {
			if err := writeBatch(ctx, tb, batchID{0, 0, seq}); err != nil {
				t.Fatal(err)
			}
		}
		files := func() []string {
			levels, err := d.pdb.SSTables()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, fs := range levels {
				for _, f := range fs {
					names = append(names, f.FileNum.String())
				}
			}
			return names
		}
		if err := d.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		settled := files()
		if err := d.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		if again := files(); fmt.Sprint(again) != fmt.Sprint(settled) {
			t.Errorf("compression %v: a second Compact rewrote %v into %v", c, settled, again)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

package main

import (
	"github.com/tsd-db/tsd/bench/gen"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestAllocatedSkipsCache counts the blocks of the data directory's files,
// leaving out VictoriaMetrics' cache/ directory.
func TestAllocatedSkipsCache(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, n int) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("data/small/part", 64<<10)
	write("cache/metricName", 256<<10)
	d := &daemon{dataDir: dir, sizeSkip: "cache"}
	n, err := d.allocated()
	if err != nil {
		t.Fatal(err)
	}
	if n < 64<<10 || n >= 256<<10 {
		t.Fatalf("allocated %d bytes, want the 64 KiB part without the 256 KiB cache", n)
	}
	d.sizeSkip = ""
	all, err := d.allocated()
	if err != nil {
		t.Fatal(err)
	}
	if all < n+256<<10 {
		t.Fatalf("allocated %d bytes with the cache, want at least %d", all, n+256<<10)
	}
}

func TestParseFlags(t *testing.T) {
	f, err := parse([]string{"-span", "1h", "-hosts", "10", "-values", "float"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if f.cfg.Hosts != 10 || f.cfg.Span.Hours() != 1 || f.values != "float" || f.conns != 2 || !f.rollups || f.tunedConns != 4 || f.pairs != 3 ||
		f.cfg.Shape != gen.ShapeDevops {
		t.Fatalf("parsed %+v", f)
	}
	if f, err = parse([]string{"-shape", "highcard"}, io.Discard); err != nil || f.cfg.Shape != gen.ShapeHighCard {
		t.Fatalf("-shape highcard: %v, shape %v", err, f.cfg.Shape)
	}
	if _, err = parse([]string{"-shape", "wide"}, io.Discard); err == nil {
		t.Fatal("-shape wide parsed")
	}
	if f, err = parse([]string{"-rollups=false"}, io.Discard); err != nil || f.rollups {
		t.Fatalf("-rollups=false: %+v, %v", f, err)
	}
	if _, err := parse([]string{"-values", "text"}, io.Discard); err == nil {
		t.Fatal("-values text accepted")
	}
	if _, err := parse([]string{"-pairs", "0"}, io.Discard); err == nil {
		t.Fatal("-pairs 0 accepted")
	}
}

// TestNonZero reads VictoriaMetrics' gauges from a metrics page: a gauge
// above zero is named, a missing one counts as zero.
func TestNonZero(t *testing.T) {
	page := []byte("# HELP x\nvm_active_force_merges 0\nvm_parts{type=\"storage/inmemory\"} 3\nvm_pending_rows{type=\"storage\"} 0\n")
	if n := nonZero(page, vmFlushed); n != `vm_parts{type="storage/inmemory"}` {
		t.Fatalf("nonZero = %q, want the in-memory parts", n)
	}
	page = []byte("\nvm_active_force_merges 0\nvm_parts{type=\"storage/inmemory\"} 0\n")
	if n := nonZero(page, vmMerged); n != "" {
		t.Fatalf("nonZero = %q on a settled page", n)
	}
}

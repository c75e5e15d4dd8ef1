package main

import (
	"context"
	"encoding/binary"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// plantStore opens a stopped store in the test's process with the tool
// flags given, for planting damage.
type plantStore struct {
	t      *testing.T
	db     storage.DB
	data   storage.Table
	u      *uid.UIDs
	layout rowkey.Layout
}

func openPlant(t *testing.T, flags []string) *plantStore {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	_, _, cl, err := parseToolArgs(flags, "fsck", c.isBoolFlag, func(string) (bool, error) { return false, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := c.load(cl, log); err != nil {
		t.Fatal(err)
	}
	db, err := c.openStore(ctx, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	u, s, err := openUIDTable(ctx, c, db, false, log)
	if err != nil {
		t.Fatal(err)
	}
	c.settings = s
	p := &plantStore{t: t, db: db, u: u}
	if p.layout, err = c.layout(); err != nil {
		t.Fatal(err)
	}
	if p.data, err = db.Table(ctx, c.dataTable); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *plantStore) id(k uid.Kind, name string) []byte {
	id, err := p.u.Lookup(context.Background(), k, []byte(name))
	if err != nil {
		p.t.Fatalf("%s %s: %v", k, name, err)
	}
	return p.u.AppendID(nil, k, id)
}

// key returns the row key of metric{host=h} at the hour of ms; metric may
// be raw UID bytes (a UID no name has).
func (p *plantStore) key(metric []byte, host string, ms int64) []byte {
	k, err := p.layout.AppendRowKey(nil, metric, ms, []rowkey.Tag{{Key: p.id(uid.TagK, "host"), Value: p.id(uid.TagV, host)}})
	if err != nil {
		p.t.Fatal(err)
	}
	return k
}

func (p *plantStore) put(row, q, v []byte) {
	if err := p.data.Put(context.Background(), row, []storage.Cell{{Family: "t", Qualifier: q, Value: v}}); err != nil {
		p.t.Fatal(err)
	}
}

// sec is a 2-byte qualifier: offset seconds and flags.
func sec(offset int, flags byte) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(offset<<4|int(flags)))
}

// TestFsckPlantedDamage plants every kind of damage tsd fsck knows into
// real stores of both formats; fsck finds each, --fix --resolve-duplicates
// repairs what it says it repairs (a second fsck finds only what it said
// it left), and the repaired rows read back as tsd reads them.
func TestFsckPlantedDamage(t *testing.T) {
	t.Parallel() // waits on daemons and builds; runs beside the other parallel tests
	for _, format := range []string{"dense", "opentsdb"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			flags := []string{"--data", data, "--tsd.storage.format=" + format, "--tsd.storage.salt.width=1", "--tsd.storage.salt.buckets=4"}
			in := filepath.Join(dir, "in.txt")
			os.WriteFile(in, []byte("sys.cpu 1356998400 1 host=a\nsys.cpu 1356998460 2 host=a\nsys.cpu 1356998520 3 host=a\n"+
				"sys.cpu 1356998400 5 host=b\ngone.metric 1356998400 9 host=a\nlonely 1356998400 4 host=a\n"), 0o644)
			if out, errs, code := runBinary(t, nil, append([]string{"import"}, append(flags, in)...)...); code != exitOK {
				t.Fatalf("import: %d %s%s", code, out, errs)
			}
			if out, errs, code := runBinary(t, nil, append([]string{"uid"}, append(flags, "delete", "metric", "gone.metric")...)...); code != exitOK {
				t.Fatalf("uid delete: %d %s%s", code, out, errs)
			}
			// Before planting: only the deleted metric's row.
			if out, errs, code := runBinary(t, nil, append([]string{"fsck"}, flags...)...); code != exitFailed ||
				!strings.Contains(out, "\norphan_row: 1 found\n") || !strings.Contains(out, "\n1 problems found") {
				t.Fatalf("fsck before planting: %d %s%s", code, out, errs)
			}
			plantDamage(t, flags)
			out, errs, code := runBinary(t, nil, append([]string{"fsck"}, flags...)...)
			want := map[string]int{"bad_key": 1, "bad_salt": 1, "unknown_uid": 1, "orphan_row": 1, "bad_qualifier": 1,
				"bad_value_length": 2, "bad_compacted": 1, "duplicate": 1, "bad_dense": 1, "missing_index": 1, "index_without_rows": 1}
			if code != exitFailed {
				t.Errorf("fsck: exit %d, want 1", code)
			}
			for kind, n := range want {
				if !strings.Contains(out, "\n"+kind+": "+itoa(n)+" found\n") {
					t.Errorf("fsck: no %q line\n%s%s", kind+": "+itoa(n)+" found", out, errs)
				}
			}
			if !strings.Contains(out, "12 problems found; run with --fix") {
				t.Errorf("fsck: total\n%s", out)
			}
			out, errs, code = runBinary(t, nil, append([]string{"fsck", "--fix", "--resolve-duplicates"}, flags...)...)
			for kind, n := range want {
				fixed := n
				if kind == "index_without_rows" {
					fixed = 0
				}
				line := "\n" + kind + ": " + itoa(n) + " found, " + itoa(fixed) + " fixed, " + itoa(n-fixed) + " not fixed\n"
				if !strings.Contains(out, line) {
					t.Errorf("fsck --fix: no %q\n%s%s", line, out, errs)
				}
			}
			if code != exitFailed || !strings.Contains(out, "12 problems found, 11 fixed, 1 not fixed") ||
				!strings.Contains(out, "(not fixed: the index has no removal") {
				t.Errorf("fsck --fix: exit %d\n%s%s", code, out, errs)
			}
			out, errs, code = runBinary(t, nil, append([]string{"fsck"}, flags...)...)
			// What --fix left: lonely's entry, and now gone.metric's, whose
			// orphan row it deleted.
			if code != exitFailed || !strings.Contains(out, "index_without_rows: 2 found\n") || !strings.Contains(out, "\n2 problems found") {
				t.Errorf("fsck after --fix: exit %d, want only index_without_rows\n%s%s", code, out, errs)
			}
			exp, errs, code := runBinary(t, nil, append([]string{"export"}, append(flags, "1356998400", "1364198400", "sys.cpu")...)...)
			wantPts := map[string]map[int64]uint64{
				"sys.cpu{host=a}": {1356998400000: f(1), 1356998460000: f(42), 1356998520000: f(3), 1356998580000: f(2.5),
					(1356998400 + 2000*3600) * 1000: f(11)},
				"sys.cpu{host=b}": {1356998400000: f(5), 1356998430000: f(7)},
			}
			if code != exitOK {
				t.Fatalf("export: %d %s", code, errs)
			}
			sameImportPoints(t, "after --fix", points(t, []byte(exp)), wantPts)
		})
	}
}

func f(v float64) uint64 { return math.Float64bits(v) }

// plantDamage writes one of each kind of damage (two bad values: one
// OpenTSDB's fix repairs, one nothing can read).
func plantDamage(t *testing.T, flags []string) {
	p := openPlant(t, flags)
	defer p.db.Close()
	const h0 = int64(1356998400000)
	cpu := p.id(uid.Metric, "sys.cpu")
	keyA := p.key(cpu, "a", h0)
	// bad_key: one byte too many.
	p.put(append(append([]byte{}, keyA...), 0xEE), sec(0, 0), []byte{1})
	// bad_salt: host=b's hour under the next bucket, a point at +30 s.
	wrong := p.key(cpu, "b", h0)
	wrong[0] = (wrong[0] + 1) % 4
	p.put(wrong, sec(30, 0), []byte{7})
	// unknown_uid: a metric UID above the max id.
	p.put(p.key([]byte{0xFF, 0xFF, 0xF0}, "a", h0), sec(0, 0), []byte{1})
	// orphan_row: gone.metric's row, its UID deleted before.
	// bad_qualifier: an offset of 4095 s, beyond the hour.
	p.put(keyA, []byte{0xFF, 0xF0}, []byte{1})
	// bad_value_length: a float announcing 4 bytes on 8 (OpenTSDB's fix
	// reads it: 2.5 at +180 s), and an integer of 3 bytes (unreadable).
	v := binary.BigEndian.AppendUint32([]byte{0, 0, 0, 0}, math.Float32bits(2.5))
	p.put(keyA, sec(180, 0x0B), v)
	p.put(keyA, sec(240, 0x00), []byte{1, 2, 3})
	// bad_compacted: two qualifiers, a value one byte short.
	p.put(keyA, append(sec(300, 1), sec(360, 1)...), []byte{0, 1, 0})
	// duplicate: +60 s again, written later: 42 wins.
	p.put(keyA, sec(60, 0), []byte{42})
	// bad_dense: a dense column that does not decode.
	p.put(keyA, rowkey.AppendDenseQualifier(nil, 9, 9), []byte{1, 2, 3})
	// missing_index: host=a 2000 hours later, beyond its span.
	p.put(p.key(cpu, "a", h0+2000*3600*1000), sec(0, 0), []byte{11})
	// index_without_rows: lonely's only row deleted.
	if err := p.data.Delete(context.Background(), p.key(p.id(uid.Metric, "lonely"), "a", h0)); err != nil {
		t.Fatal(err)
	}
}

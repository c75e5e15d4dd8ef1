package storagetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// A mutant is the model with one deliberate contract violation. Each must
// make the named subtest fail, which shows the suite can catch that bug.
var mutants = []struct {
	name     string
	run      string // -test.run pattern below TestMutant
	mustFail string // subtest that must fail
}{
	{"regex-contains", "^Scan$/^RegexFullMatch$", "Scan/RegexFullMatch"},
	{"deleterange-inclusive", "^Delete$/^Range$", "Delete/Range"},
	{"reverse-cells", "^Scan$/^Reverse$", "Scan/Reverse"},
	{"increment-racy", "^Increment$/^Concurrent$", "Increment/Concurrent"},
	{"cas-racy", "^CheckAndPut$/^Race$", "CheckAndPut/Race"},
	{"ttl-ignored", "^TTL$/^ExpiredInvisible$", "TTL/ExpiredInvisible"},
	{"maxversions-ignored", "^PutGet$/^FamilyMaxVersions$", "PutGet/FamilyMaxVersions"},
	{"tombstone", "^Delete$/^NoTombstone$", "Delete/NoTombstone"},
	{"ctx-ignored", "^Lifecycle$/^CanceledContext$", "Lifecycle/CanceledContext"},
	{"ctx-ignored", "^Scan$/^ContextCancel$", "Scan/ContextCancel"},
	{"closed-ignored", "^Lifecycle$/^ClosedDB$", "Lifecycle/ClosedDB"},
	{"first-write-wins", "^PutGet$/^EqualTimestampLaterWins$", "PutGet/EqualTimestampLaterWins"},
	{"apply-puts-first", "^Model$", "Model/Random"},
	{"limit-plus-one", "^Model$", "Model/Random"},
	{"deletes-ignore-range", "^Model$", "Model/Random"},
	{"getappend-overwrites", "^GetAppend$/^KeepsEarlierCells$", "GetAppend/KeepsEarlierCells"},
	{"getappend-overwrites", "^PutGet$/^RoundTrip$", "PutGet/RoundTrip"},
	{"getappend-aliases", "^PutGet$/^RoundTrip$", "PutGet/RoundTrip"},
	{"getappend-stale", "^PutGet$/^RoundTrip$", "PutGet/RoundTrip"},
	{"getappend-uncapped", "^PutGet$/^RoundTrip$", "PutGet/RoundTrip"},
	{"getappend-drops-last", "^GetAppend$/^ReuseAcrossRows$", "GetAppend/ReuseAcrossRows"},
	{"getappend-notfound-resets", "^GetAppend$/^NotFoundUnchanged$", "GetAppend/NotFoundUnchanged"},
	{"getappend-notfound-resets", "^GetAppend$/^KeepsEarlierCells$", "GetAppend/KeepsEarlierCells"},
	{"getappend-accepts-bad", "^GetAppend$/^BadInput$", "GetAppend/BadInput"},
	{"getappend-ignores-options", "^PutGet$/^QualifierFilters$", "PutGet/QualifierFilters"},
	{"getappend-ignores-options", "^Model$", "Model/Random"},
	{"rows-split", "^Scan$/^RowShape$", "Scan/RowShape"},
	{"rows-merged", "^Scan$/^RowShape$", "Scan/RowShape"},
	{"partial-missing", "^Scan$/^BatchBound$", "Scan/BatchBound"},
	{"partial-missing", "^Model$", "Model/Random"},
	{"bound-off-by-one", "^Scan$/^BatchBound$", "Scan/BatchBound"},
	{"limit-counts-batches", "^Scan$/^BatchBoundLimit$", "Scan/BatchBoundLimit"},
}

const mutantEnv = "TSD_STORAGETEST_MUTANT"

// TestMutants runs the suite on each mutant in a child process and expects
// the mutant's subtest to fail there.
func TestMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, m := range mutants {
		t.Run(m.name+"/"+m.mustFail, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMutant$/"+m.run, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), mutantEnv+"="+m.name)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL: TestMutant/"+m.mustFail) {
				t.Fatalf("mutant %s survived %s (exit %v):\n%s", m.name, m.mustFail, err, out)
			}
		})
	}
}

// TestMutant is the child side of TestMutants.
func TestMutant(t *testing.T) {
	name := os.Getenv(mutantEnv)
	if name == "" {
		t.Skip("run by TestMutants")
	}
	open := func(t testing.TB) storage.DB {
		db := newMemDB(time.Now)
		t.Cleanup(func() { _ = db.Close() })
		return &mutantDB{DB: db, mutant: name}
	}
	Run(t, open, Options{ModelSteps: 3000, SkipSlow: true})
}

type mutantDB struct {
	storage.DB
	mutant string
}

func (db *mutantDB) EnsureTable(ctx context.Context, spec storage.TableSpec) error {
	spec = cloneSpec(spec)
	for i := range spec.Families {
		switch db.mutant {
		case "ttl-ignored":
			spec.Families[i].TTL = 0
		case "maxversions-ignored":
			spec.Families[i].MaxVersions = 0
		}
	}
	return db.DB.EnsureTable(ctx, spec)
}

func (db *mutantDB) Table(ctx context.Context, name string) (storage.Table, error) {
	tbl, err := db.DB.Table(ctx, name)
	if err != nil {
		return nil, err
	}
	return &mutantTable{Table: tbl, mutant: db.mutant, tombs: make(map[string]int64)}, nil
}

func (db *mutantDB) Close() error {
	if db.mutant == "closed-ignored" {
		return nil
	}
	return db.DB.Close()
}

type mutantTable struct {
	storage.Table
	mutant string
	tombs  map[string]int64 // for "tombstone"; tests using it are serial
}

func (t *mutantTable) ctx(ctx context.Context) context.Context {
	if t.mutant == "ctx-ignored" {
		return context.Background()
	}
	return ctx
}

func (t *mutantTable) Get(ctx context.Context, row []byte, o *storage.ReadOptions) ([]storage.Cell, error) {
	return t.Table.Get(t.ctx(ctx), row, o)
}

// GetAppend breaks the getappend-* mutants' rule of the contract; see
// getAppendMutant.
func (t *mutantTable) GetAppend(ctx context.Context, dst []storage.Cell, buf []byte, row []byte, o *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	ctx = t.ctx(ctx)
	if !strings.HasPrefix(t.mutant, "getappend-") {
		return t.Table.GetAppend(ctx, dst, buf, row, o)
	}
	return t.getAppendMutant(ctx, dst, buf, row, o)
}

func (t *mutantTable) getAppendMutant(ctx context.Context, dst []storage.Cell, buf []byte, row []byte, o *storage.ReadOptions) ([]storage.Cell, []byte, error) {
	switch t.mutant {
	case "getappend-overwrites": // writes over what dst and buf held
		return t.Table.GetAppend(ctx, dst[:0], buf[:0], row, o)
	case "getappend-ignores-options":
		return t.Table.GetAppend(ctx, dst, buf, row, nil)
	case "getappend-accepts-bad":
		if len(row) == 0 || len(row) > storage.MaxRowKeySize {
			return dst, buf, storage.ErrNotFound
		}
	case "getappend-notfound-resets":
		out, outBuf, err := t.Table.GetAppend(ctx, dst, buf, row, o)
		if err != nil {
			return out[:0], outBuf[:0], err
		}
		return out, outBuf, nil
	}
	cells, err := t.Table.Get(ctx, row, o)
	if err != nil {
		return dst, buf, err
	}
	switch t.mutant {
	case "getappend-aliases": // the cells keep Get's memory
		return append(dst, cells...), buf, nil
	case "getappend-drops-last":
		if len(cells) > 1 {
			cells = cells[:len(cells)-1]
		}
	case "getappend-uncapped": // each cell's bytes run on into the next's
		buf = slices.Grow(buf, 1<<20) // no move: only the caps are wrong
		for _, c := range cells {
			k := len(buf)
			buf = append(buf, c.Qualifier...)
			c.Qualifier = buf[k:len(buf)]
			k = len(buf)
			buf = append(buf, c.Value...)
			c.Value = buf[k:len(buf)]
			row := slices.Clone(c.Row)
			buf = append(buf, row...)
			c.Row = buf[len(buf)-len(row):]
			dst = append(dst, c)
		}
		return dst, buf, nil
	case "getappend-stale": // buf moves after the cells point into it
		dst, buf = appendOwned(dst, buf, cells)
		return dst, append(buf[:len(buf):len(buf)], 0)[:len(buf)], nil
	}
	dst, buf = appendOwned(dst, buf, cells)
	return dst, buf, nil
}

func (t *mutantTable) Scan(ctx context.Context, o *storage.ScanOptions) storage.Scanner {
	var so storage.ScanOptions
	if o != nil {
		so = *o
		o = &so
		switch {
		case t.mutant == "regex-contains" && o.RowRegex != "":
			o.RowRegex = "(?s).*(?:" + o.RowRegex + ").*"
		case t.mutant == "limit-plus-one" && o.Limit > 0:
			o.Limit++
		case t.mutant == "bound-off-by-one" && o.MaxBatchBytes > 1: // the bound taken as exclusive
			o.MaxBatchBytes--
		case t.mutant == "limit-counts-batches":
			o.Limit = 0
		}
	}
	if t.mutant == "ctx-ignored" {
		ctx = context.Background()
	}
	reshape := rowMutants[t.mutant]
	if reshape == nil {
		return t.Table.Scan(ctx, o)
	}
	rows, err := drainRows(ctx, t.Table, o)
	return &rowsScanner{ctx: ctx, rows: reshape(rows, &so), err: err}
}

// rowMutants break the shape of a scan's rows.
var rowMutants = map[string]func(rows []storage.Row, o *storage.ScanOptions) []storage.Row{
	"reverse-cells": func(rows []storage.Row, o *storage.ScanOptions) []storage.Row {
		if !o.Reverse {
			return rows
		}
		cells := flatten(rows)
		slices.Reverse(cells)
		var out []storage.Row
		for _, c := range cells {
			if n := len(out); n > 0 && bytes.Equal(out[n-1].Key, c.Row) {
				out[n-1].Cells = append(out[n-1].Cells, c)
				continue
			}
			out = append(out, storage.Row{Key: c.Row, Cells: []storage.Cell{c}})
		}
		return out
	},
	"rows-split": func(rows []storage.Row, _ *storage.ScanOptions) []storage.Row { // a cell a batch
		var out []storage.Row
		for _, r := range rows {
			for i, c := range r.Cells {
				out = append(out, storage.Row{Key: r.Key, Cells: []storage.Cell{c}, Partial: r.Partial || i < len(r.Cells)-1})
			}
		}
		return out
	},
	"rows-merged": func(rows []storage.Row, _ *storage.ScanOptions) []storage.Row { // two whole rows a batch
		var out []storage.Row
		for i := 0; i < len(rows); i++ {
			r := rows[i]
			if i+1 < len(rows) && !r.Partial && !rows[i+1].Partial {
				i++
				r.Cells = slices.Concat(r.Cells, rows[i].Cells)
			}
			out = append(out, r)
		}
		return out
	},
	"partial-missing": func(rows []storage.Row, _ *storage.ScanOptions) []storage.Row {
		for i := range rows {
			rows[i].Partial = false
		}
		return rows
	},
	"limit-counts-batches": func(rows []storage.Row, o *storage.ScanOptions) []storage.Row {
		if o.Limit > 0 && len(rows) > o.Limit {
			rows = rows[:o.Limit]
		}
		return rows
	},
}

func (t *mutantTable) Put(ctx context.Context, row []byte, cells []storage.Cell) error {
	var keep []storage.Cell
	for _, c := range cells {
		if t.mutant == "tombstone" && c.Timestamp != 0 && c.Timestamp <= t.tombs[string(row)] {
			continue
		}
		if t.mutant == "first-write-wins" && c.Timestamp != 0 && t.versionExists(ctx, row, c) {
			continue
		}
		keep = append(keep, c)
	}
	return t.Table.Put(t.ctx(ctx), row, keep)
}

func (t *mutantTable) versionExists(ctx context.Context, row []byte, c storage.Cell) bool {
	_, err := t.Table.Get(ctx, row, &storage.ReadOptions{Families: []string{c.Family},
		Qualifiers: [][]byte{c.Qualifier}, MinTime: c.Timestamp, MaxTime: c.Timestamp + 1000})
	return err == nil
}

func (t *mutantTable) Apply(ctx context.Context, muts []storage.Mutation) error {
	if t.mutant != "apply-puts-first" {
		return t.Table.Apply(t.ctx(ctx), muts)
	}
	for _, mu := range muts {
		if err := t.Table.Put(ctx, mu.Row, mu.Cells); err != nil {
			return err
		}
		if len(mu.Deletes) > 0 {
			if err := t.Table.Delete(ctx, mu.Row, mu.Deletes...); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *mutantTable) Delete(ctx context.Context, row []byte, dels ...storage.Deletion) error {
	if t.mutant == "tombstone" && len(dels) == 0 {
		if cells, err := t.Table.Get(ctx, row, nil); err == nil {
			for _, c := range cells {
				t.tombs[string(row)] = max(t.tombs[string(row)], c.Timestamp)
			}
		}
	}
	if t.mutant == "deletes-ignore-range" {
		dels = slices.Clone(dels)
		for i := range dels {
			dels[i].MinTime, dels[i].MaxTime = 0, 0
		}
	}
	return t.Table.Delete(t.ctx(ctx), row, dels...)
}

func (t *mutantTable) DeleteRange(ctx context.Context, start, stop []byte) error {
	if t.mutant == "deleterange-inclusive" && stop != nil {
		stop = append(bytes.Clone(stop), 0)
	}
	return t.Table.DeleteRange(t.ctx(ctx), start, stop)
}

func (t *mutantTable) Increment(ctx context.Context, row []byte, fam string, q []byte, delta int64) (int64, error) {
	if t.mutant != "increment-racy" {
		return t.Table.Increment(t.ctx(ctx), row, fam, q, delta)
	}
	var n int64
	cells, err := t.Table.Get(ctx, row, &storage.ReadOptions{Families: []string{fam}, Qualifiers: [][]byte{q}, MaxVersions: 1})
	if err == nil {
		n = int64(be64toU(cells[0].Value))
	}
	runtime.Gosched()
	n += delta
	return n, t.Table.Put(ctx, row, []storage.Cell{{Family: fam, Qualifier: q, Value: be64(n)}})
}

func be64toU(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

func (t *mutantTable) CheckAndPut(ctx context.Context, row []byte, fam string, q, expected []byte, cells []storage.Cell) error {
	if t.mutant != "cas-racy" {
		return t.Table.CheckAndPut(t.ctx(ctx), row, fam, q, expected, cells)
	}
	got, err := t.Table.Get(ctx, row, &storage.ReadOptions{Families: []string{fam}, Qualifiers: [][]byte{q}, MaxVersions: 1})
	present := err == nil
	if expected == nil && present || expected != nil && (!present || !bytes.Equal(got[0].Value, expected)) {
		return storage.ErrConflict
	}
	runtime.Gosched()
	return t.Table.Put(ctx, row, cells)
}

func (t *mutantTable) Append(ctx context.Context, row []byte, fam string, q, v []byte) ([]byte, error) {
	return t.Table.Append(t.ctx(ctx), row, fam, q, v)
}

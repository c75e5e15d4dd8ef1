package pebble

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// RepairReport says what Repair found and did.
type RepairReport struct {
	// Checked counts the sstables whose every block was verified.
	Checked int
	// Spans lists the key spans rewritten, in key order: one per group of
	// damaged sstables whose key ranges overlap.
	Spans []RepairedSpan
	// Restored names the tables whose catalog entry the repair lost and
	// wrote back from the catalog's copy; RestoredCounter says the table id
	// counter was written back too.
	Restored        []string
	RestoredCounter bool
}

// RepairedSpan is a key span Repair rebuilt: it read back every cell of
// the span that it could, removed the span from every level (pebble's
// excise) and wrote those cells again.
type RepairedSpan struct {
	// Files are the damaged sstables the span covers; Levels their levels.
	Files  []DamagedFile
	Levels []int
	// Start and End bound the span (pebble keys, End exclusive): whole
	// rows, since pebble excises only at row boundaries.
	Start, End []byte
	// Kept counts the cells written back.
	Kept int64
	// Lost lists, per table, the rows whose cells could not all be read.
	Lost []LostRows
}

// LostRows are rows of one table whose cells Repair could not read: every
// cell after the cell After and before the cell Before is gone, in any
// level. After and Before are the last and the first cells read intact
// around the damage, their rows FromRow and ToRow; a nil row means the
// range runs from the table's (or the span's) start or to its end.
type LostRows struct {
	// Table is the table's name, "" for the engine's own records (the
	// table catalog); TableID its id.
	Table   string
	TableID uint32
	// FromRow and ToRow bound the rows, both partly lost and both included.
	FromRow, ToRow []byte
	// FromStart and ToEnd mark bounds that are the table's ends.
	FromStart, ToEnd bool
}

// Repair opens the stopped store in dir, verifies the checksum of every
// block of every sstable, and rebuilds the key span of each damaged one:
// it reads every cell of the span through pebble, stepping over the damaged
// blocks (the rows between the last cell read before one and the first read
// after it are lost, whatever level held them), removes the span from all
// levels with pebble's excise and ingests what it read, so the span holds
// exactly the cells that were visible and readable. Data outside the spans
// is not touched. Afterwards every sstable is verified again.
func Repair(ctx context.Context, dir string, opts *Options) (*RepairReport, error) {
	d, err := open(dir, opts, true)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := d.pdb.Flush(); err != nil {
		return nil, fmt.Errorf("repair %s: flush: %w", dir, err)
	}
	found, checked, err := d.findDamaged(ctx)
	if err != nil {
		return nil, err
	}
	rep := &RepairReport{Checked: checked}
	for _, span := range mergeSpans(found) {
		rs, err := d.rebuildSpan(ctx, span)
		if err != nil {
			return rep, err
		}
		rep.Spans = append(rep.Spans, *rs)
	}
	if len(rep.Spans) == 0 {
		return rep, nil
	}
	if rep.Restored, rep.RestoredCounter, err = d.restoreCatalog(); err != nil {
		return rep, err
	}
	left, _, err := d.findDamaged(ctx)
	if err == nil && len(left) > 0 {
		err = fmt.Errorf("repair %s: %s still damaged after the repair", dir, left[0].file.Path)
	}
	return rep, err
}

// restoreCatalog writes back the catalog entries and the table id counter
// that a rebuilt span lost, from the catalog open read (from the store
// before the repair, or from its copy).
func (d *DB) restoreCatalog() (names []string, counter bool, err error) {
	d.cat.Lock()
	defer d.cat.Unlock()
	b := d.pdb.NewBatch()
	defer b.Close()
	for _, name := range slices.Sorted(maps.Keys(d.cat.tables)) {
		t := d.cat.tables[name]
		key := appendCatalogKey(nil, name)
		if found, err := d.hasKey(key); err != nil || found {
			if err != nil {
				return nil, false, err
			}
			continue
		}
		_ = b.Set(key, appendSpec(nil, t.id, t.state.Load().spec), nil)
		names = append(names, name)
	}
	found, err := d.hasKey(metaNextKey)
	if err != nil {
		return nil, false, err
	}
	if !found && len(d.cat.tables) > 0 {
		_ = b.Set(metaNextKey, binary.BigEndian.AppendUint32(nil, d.cat.nextID), nil)
		counter = true
	}
	if b.Empty() {
		return nil, false, nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return nil, false, fmt.Errorf("repair %s: restore the catalog: %w", d.dir, err)
	}
	return names, counter, nil
}

// hasKey reports whether key exists.
func (d *DB) hasKey(key []byte) (bool, error) {
	_, closer, err := d.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("repair %s: read %q: %w", d.dir, key, err)
	}
	closer.Close()
	return true, nil
}

// damagedTable is a damaged sstable in the LSM.
type damagedTable struct {
	file  DamagedFile
	level int
}

// findDamaged verifies every live sstable and returns the damaged ones with
// their key ranges.
func (d *DB) findDamaged(ctx context.Context) ([]damagedTable, int, error) {
	levels, err := d.pdb.SSTables()
	if err != nil {
		return nil, 0, fmt.Errorf("repair %s: list sstables: %w", d.dir, err)
	}
	verdict := map[string]error{} // by backing file: virtual tables share one
	var out []damagedTable
	checked := 0
	for level, tables := range levels {
		for _, t := range tables {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
			path := d.opts.FS.PathJoin(d.dir, fmt.Sprintf("%s.sst", t.BackingSSTNum))
			verr, seen := verdict[path]
			if !seen {
				verr = d.verifyTable(ctx, path)
				verdict[path] = verr
				checked++
			}
			if verr == nil {
				continue
			}
			lo, hi := bytes.Clone(t.Smallest.UserKey), bytes.Clone(t.Largest.UserKey)
			f := DamagedFile{Path: path, Smallest: lo, Largest: hi, LargestExclusive: t.Largest.IsExclusiveSentinel(),
				Keys: d.damage.describeRange(lo, hi), Err: verr}
			out = append(out, damagedTable{file: f, level: level})
		}
	}
	return out, checked, nil
}

// verifyTable reads every block of the sstable at path and returns the
// first damage found.
func (d *DB) verifyTable(ctx context.Context, path string) error {
	return openTable(ctx, d.opts.FS, path, d.po, true)
}

// openTable opens the sstable at path and reads its range deletions, or
// with all every block, and returns the first damage found.
func openTable(ctx context.Context, fs vfs.FS, path string, po *pebble.Options, all bool) error {
	f, err := fs.Open(path, vfs.RandomReadsOption)
	if err != nil {
		return err
	}
	readable, err := objstorageprovider.NewFileReadable(f, fs, objstorageprovider.NewReadaheadConfig(), path)
	if err != nil {
		f.Close()
		return err
	}
	r, err := sstable.NewReader(ctx, readable, po.MakeReaderOptions())
	if err != nil {
		readable.Close()
		return err
	}
	if all {
		err = r.ValidateBlockChecksums()
	} else {
		err = readRangeDels(ctx, r)
	}
	if cerr := r.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// readRangeDels reads an sstable's range deletion block, if it has one.
func readRangeDels(ctx context.Context, r *sstable.Reader) error {
	it, err := r.NewRawRangeDelIter(ctx, sstable.NoFragmentTransforms, sstable.NoReadEnv)
	if err != nil || it == nil {
		return err
	}
	defer it.Close()
	_, err = it.First()
	return err
}

// repairSpan is a key span to rebuild and the damaged tables in it.
type repairSpan struct {
	start, end []byte
	tables     []damagedTable
}

// mergeSpans widens each damaged table's range to whole rows and joins the
// ranges that overlap.
func mergeSpans(tables []damagedTable) []repairSpan {
	var spans []repairSpan
	for _, t := range tables {
		start := bytes.Clone(t.file.Smallest[:split(t.file.Smallest)])
		hi := t.file.Largest[:split(t.file.Largest)]
		end := immediateSuccessor(nil, hi)
		spans = append(spans, repairSpan{start: start, end: end, tables: []damagedTable{t}})
	}
	slices.SortFunc(spans, func(a, b repairSpan) int { return bytes.Compare(a.start, b.start) })
	var out []repairSpan
	for _, s := range spans {
		if n := len(out); n > 0 && bytes.Compare(s.start, out[n-1].end) < 0 {
			last := &out[n-1]
			if bytes.Compare(s.end, last.end) > 0 {
				last.end = s.end
			}
			last.tables = append(last.tables, s.tables...)
			continue
		}
		out = append(out, s)
	}
	return out
}

// rebuildSpan copies the readable cells of span to a new sstable, then
// excises the span and ingests the copy in one step.
func (d *DB) rebuildSpan(ctx context.Context, span repairSpan) (*RepairedSpan, error) {
	rs := &RepairedSpan{Start: span.start, End: span.end}
	for _, t := range span.tables {
		rs.Files, rs.Levels = append(rs.Files, t.file), append(rs.Levels, t.level)
	}
	path := d.opts.FS.PathJoin(d.dir, "repair.sst.tmp")
	w, err := d.newSalvageWriter(path)
	if err != nil {
		return nil, err
	}
	defer d.opts.FS.Remove(path)
	lost, err := d.salvage(ctx, span, w)
	rs.Kept = w.n
	if cerr := w.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("repair %s: read back %s: %w", d.dir, d.damage.describeRange(span.start, span.end), err)
	}
	kr := pebble.KeyRange{Start: span.start, End: span.end}
	if rs.Kept > 0 {
		_, err = d.pdb.IngestAndExcise(ctx, []string{path}, nil, nil, kr)
	} else {
		err = d.pdb.Excise(ctx, kr)
	}
	if err != nil {
		return nil, fmt.Errorf("repair %s: replace %s: %w", d.dir, d.damage.describeRange(span.start, span.end), err)
	}
	for _, l := range lost {
		rs.Lost = append(rs.Lost, d.lostRows(l[0], l[1], span)...)
	}
	return rs, nil
}

// salvageWriter writes the cells read back to an sstable.
type salvageWriter struct {
	w *sstable.Writer
	n int64
}

func (d *DB) newSalvageWriter(path string) (*salvageWriter, error) {
	f, err := d.opts.FS.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("repair %s: create %s: %w", d.dir, path, err)
	}
	wo := d.po.MakeWriterOptions(len(d.po.Levels)-1, d.pdb.TableFormat())
	return &salvageWriter{w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), wo)}, nil
}

func (w *salvageWriter) set(key, value []byte) error {
	w.n++
	return w.w.Set(key, value)
}

func (w *salvageWriter) close() error { return w.w.Close() }

// salvage writes every cell of span it can read to w, in key order, and
// returns the key ranges it could not read, as the intact keys around each
// (nil: the span's edge). Reading forward stops at damage; reading back
// from the span's end then finds the first intact cell above it, and
// reading forward resumes there. Damaged blocks close together are stepped
// over as one range.
func (d *DB) salvage(ctx context.Context, span repairSpan, w *salvageWriter) ([][2][]byte, error) {
	var lost [][2][]byte
	from, after := span.start, []byte(nil)
	for {
		last, err := d.copyForward(ctx, from, span.end, w)
		if last != nil {
			after = last
		}
		if err == nil || !pebble.IsCorruptionError(err) {
			return lost, err
		}
		floor := span.start
		if after != nil {
			floor = immediateSuccessor(nil, after)
		}
		resume, err := d.firstIntactAbove(ctx, floor, span.end)
		if err != nil {
			return lost, err
		}
		if resume != nil && last == nil && len(lost) > 0 && bytes.Equal(resume, from) {
			resume = nil // forward reading fails where backward reading ended: give up the rest
		}
		if n := len(lost); n > 0 && bytes.Equal(lost[n-1][0], after) {
			lost[n-1][1] = resume
		} else {
			lost = append(lost, [2][]byte{after, resume})
		}
		if resume == nil {
			return lost, nil
		}
		from = resume
	}
}

// copyForward writes the cells of [from, end) to w until the end or an
// error, and returns the last key written.
func (d *DB) copyForward(ctx context.Context, from, end []byte, w *salvageWriter) ([]byte, error) {
	it, err := d.pdb.NewIter(&pebble.IterOptions{LowerBound: from, UpperBound: end})
	if err != nil {
		return nil, err
	}
	var last []byte
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return last, err
		}
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return last, err
		}
		if err := w.set(it.Key(), v); err != nil {
			it.Close()
			return last, err
		}
		last = append(last[:0], it.Key()...)
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return last, err
}

// firstIntactAbove reads [floor, end) backward until damage stops it and
// returns the lowest key read (nil if none): the first intact cell above
// the damage.
func (d *DB) firstIntactAbove(ctx context.Context, floor, end []byte) ([]byte, error) {
	it, err := d.pdb.NewIter(&pebble.IterOptions{LowerBound: floor, UpperBound: end})
	if err != nil && !pebble.IsCorruptionError(err) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	var low []byte
	for ok := it.Last(); ok; ok = it.Prev() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return nil, err
		}
		if _, err := it.ValueAndErr(); err != nil {
			break
		}
		low = append(low[:0], it.Key()...)
	}
	err = it.Error()
	it.Close()
	if err != nil && !pebble.IsCorruptionError(err) {
		return nil, err
	}
	return low, nil
}

// lostRows splits the lost key range (after, before) of span by table; a
// nil bound is the span's first or last row.
func (d *DB) lostRows(after, before []byte, span repairSpan) []LostRows {
	lo, hi := after, before
	if lo == nil {
		lo = span.start
	}
	if hi == nil {
		for _, t := range span.tables {
			if hi == nil || bytes.Compare(t.file.Largest, hi) > 0 {
				hi = t.file.Largest
			}
		}
	}
	var out []LostRows
	if lo[0] < idBase {
		out = append(out, LostRows{FromStart: true, ToEnd: true})
	}
	loID, hiID := keyTableID(lo), keyTableID(hi)
	d.cat.Lock()
	defer d.cat.Unlock()
	for name, t := range d.cat.tables {
		if t.id < loID || t.id > hiID {
			continue
		}
		r := LostRows{Table: name, TableID: t.id, FromStart: t.id != loID, ToEnd: t.id != hiID}
		if !r.FromStart {
			r.FromRow, r.FromStart = keyRow(lo)
		}
		if !r.ToEnd {
			r.ToRow, r.ToEnd = keyRow(hi)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b LostRows) int { return int(a.TableID) - int(b.TableID) })
	return out
}

// keyTableID returns the table id of a data key; 0 below the data keys and
// the largest id above them.
func keyTableID(k []byte) uint32 {
	if len(k) == 0 || k[0] < idBase {
		return 0
	}
	id, _, err := parseID(k)
	if err != nil {
		return 1<<32 - 1
	}
	return id
}

// keyRow returns the row of a data key, or reports that the key holds
// no whole row field (a bound at the table's start).
func keyRow(k []byte) ([]byte, bool) {
	_, n, err := parseID(k)
	if err != nil {
		return nil, true
	}
	row, _, _, err := parseField(nil, k[n:])
	if err != nil {
		return nil, true
	}
	return row, false
}

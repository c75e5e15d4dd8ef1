package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
)

// repairUsage documents `tsd repair`.
const repairUsage = `Usage: tsd repair [--config FILE] [--KEY=VALUE]... [--data DIR]

Repairs a stopped daemon's embedded store after damage (a flipped byte in
an sstable): verifies the checksum of every block of every sstable, and
rebuilds the key range of each damaged one from every cell that can still
be read there, in any level; only the cells around the damaged blocks are
lost. It then says what was lost: the metrics and hours of the data table,
with names from the UID table, and the rows of the UID and meta tables,
with the command to run next. An undamaged store is left as it is. The
daemon must be stopped first: the store is locked while it runs. Settings
are the daemon's keys; the salt and UID widths come from the store's record.

Output:
  checked N sstables
  damaged sstable FILE (level L, keys ...): ERROR      one per damaged file
  rebuilt KEYS: C cells kept
  lost data: salt bucket B: metric NAME (UID) hours HOUR to HOUR
  lost data: salt bucket B: metric NAME (UID) hours from HOUR
  lost data: salt bucket B: metric NAME (UID) every hour
  lost data: salt bucket B: metric NAME (UID) hours to HOUR
  lost UID table rows from ROW to ROW: run tsd uid fsck
  lost series index rows from ROW to ROW: run tsd index rebuild
  restored catalog entries: TABLE, ...
  repaired: S ranges rebuilt, C cells kept, R row ranges lost
A lost range of the data table prints one line per metric of each salt
bucket it crosses (without salt, no bucket): the metric's hours from the
first lost row's or to the last one's, or every hour for the metrics between
(at most 200 lines a range). Hours are UTC; the rows at both ends of a range
are partly lost. tsd repair exits 0 once the store is clean, 1 when it could
not repair it.

Flags:
  --help, -h                  print this help
`

// runRepair is `tsd repair ...`.
func runRepair(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	pos, help, cl, err := parseToolArgs(args, "repair", c.isBoolFlag, func(string) (bool, error) { return false, nil })
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "tsd repair: %v\nRun 'tsd repair --help' for usage.\n", err)
		return exitUsage
	}
	if help {
		fmt.Fprint(stdout, repairUsage)
		return exitOK
	}
	return runTool("tsd repair", "tsd repair", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return repair(ctx, c, log, stdout)
	})
}

// repair runs pebble.Repair on the store and reports what was lost.
func repair(ctx context.Context, c *config, log *slog.Logger, out io.Writer) (int, error) {
	if c.engine == "bigtable" {
		return exitUsage, fmt.Errorf("only the embedded store (tsd.storage.engine=pebble) is repaired here")
	}
	if _, err := os.Stat(c.dataDir); err != nil {
		return exitFailed, fmt.Errorf("no store (tsd.storage.directory): %w", err)
	}
	record, recorded := readRecordBefore(ctx, c, log)
	rep, err := pebble.Repair(ctx, c.dataDir, &pebble.Options{Logger: log})
	if err != nil && isLockError(err) {
		return exitFailed, fmt.Errorf("the store in %s is locked by a running tsd: stop the daemon first (%w)", c.dataDir, err)
	}
	if rep != nil {
		fmt.Fprintf(out, "checked %d sstables\n", rep.Checked)
	}
	if err != nil {
		return exitFailed, err
	}
	if len(rep.Spans) == 0 {
		fmt.Fprintln(out, "no damage found")
		return exitOK, nil
	}
	if err := restoreRecord(ctx, c, log, out, record, recorded); err != nil {
		return exitFailed, err
	}
	names, closeNames := openRepairNames(ctx, c, log)
	defer closeNames()
	var kept int64
	lost := 0
	for _, s := range rep.Spans {
		for i, f := range s.Files {
			fmt.Fprintf(out, "damaged sstable %s (level %d, keys %s): %v\n", f.Path, s.Levels[i], f.Keys, firstLine(f.Err))
		}
		fmt.Fprintf(out, "rebuilt %s: %d cells kept\n", s.Files[0].Keys, s.Kept)
		for _, l := range s.Lost {
			names.report(ctx, out, l)
		}
		kept += s.Kept
		lost += len(s.Lost)
	}
	if len(rep.Restored) > 0 {
		fmt.Fprintf(out, "restored catalog entries: %s\n", strings.Join(rep.Restored, ", "))
	}
	fmt.Fprintf(out, "repaired: %d ranges rebuilt, %d cells kept, %d row ranges lost\n", len(rep.Spans), kept, lost)
	return exitOK, nil
}

// readRecordBefore reads the store's settings record before the repair,
// which may lose it; ok is false when it cannot be read (damaged, or a
// store without one).
func readRecordBefore(ctx context.Context, c *config, log *slog.Logger) (schema.Settings, bool) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return schema.Settings{}, false
	}
	defer db.Close()
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return schema.Settings{}, false
	}
	s, exists, err := schema.ReadRecord(ctx, meta)
	return s, err == nil && exists
}

// restoreRecord writes the settings record back when the repair lost it:
// the one read before, or else the configured settings. Without it the
// daemon would take the store's UID data for OpenTSDB's and refuse to
// start.
func restoreRecord(ctx context.Context, c *config, log *slog.Logger, out io.Writer, before schema.Settings, had bool) error {
	db, err := c.openStore(ctx, log, nil) // nil: pebble makes its own rate log
	if err != nil {
		return err
	}
	defer db.Close()
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return nil // no meta table: an OpenTSDB store, never recorded
	}
	if _, exists, err := schema.ReadRecord(ctx, meta); err != nil || exists {
		return err
	}
	s, from := before, "as read before the repair"
	if !had {
		s, from = c.settings, "from the configuration: check it is the one the store was created with"
	}
	if err := schema.WriteRecord(ctx, meta, s); err != nil {
		return fmt.Errorf("write back the settings record: %w", err)
	}
	fmt.Fprintf(out, "restored the settings record (%s): format %s, salt width %d, %d salt buckets, UID widths %d/%d/%d\n",
		from, s.Format, s.SaltWidth, s.SaltBuckets, s.Widths.Metric, s.Widths.TagK, s.Widths.TagV)
	return nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// repairNames decodes lost rows for the report: data rows into metrics,
// salt buckets and hours, with names from the UID table when it can be read.
type repairNames struct {
	c        *config
	settings schema.Settings
	u        *uid.UIDs
	uidTbl   storage.Table
}

// openRepairNames opens the repaired store to name what was lost; without
// it the report gives UIDs alone.
func openRepairNames(ctx context.Context, c *config, log *slog.Logger) (*repairNames, func()) {
	n := &repairNames{c: c, settings: c.storeSettings()}
	db, err := c.openStore(ctx, log, nil) // nil: pebble makes its own rate log
	if err != nil {
		return n, func() {}
	}
	if n.uidTbl, err = db.Table(ctx, c.uidTable); err == nil {
		if s, err := storeRecord(ctx, c, db, n.uidTbl, false); err == nil {
			n.settings = s
		}
		n.u, _ = uid.New(n.uidTbl, &uid.Options{Widths: n.settings.Widths, Format: n.settings.Format, Logger: log})
	}
	return n, func() { db.Close() }
}

// report prints one lost-rows line.
func (n *repairNames) report(ctx context.Context, out io.Writer, l pebble.LostRows) {
	from, to := rowText(l.FromRow, l.FromStart, "its first row"), rowText(l.ToRow, l.ToEnd, "its last row")
	switch l.Table {
	case "":
		fmt.Fprintln(out, "lost engine records (table catalog, table id counter): written back from the catalog's copy where they were lost")
	case n.c.dataTable:
		n.reportData(ctx, out, l)
	case n.c.uidTable:
		fmt.Fprintf(out, "lost UID table rows from %s to %s: names and UIDs there may be missing: run tsd uid fsck\n", from, to)
	case n.c.metaTable:
		fmt.Fprintf(out, "lost series index rows from %s to %s: run tsd index rebuild\n", from, to)
	default:
		fmt.Fprintf(out, "lost rows of table %s from %s to %s\n", l.Table, from, to)
	}
}

func rowText(row []byte, edge bool, what string) string {
	if edge || row == nil {
		return what
	}
	return fmt.Sprintf("%X", row)
}

// dataRow is the start of a data row key: salt, metric UID and hour; ok
// is false for a table edge.
type dataRow struct {
	bucket []byte
	metric []byte
	hour   int64
	ok     bool
}

func (n *repairNames) parseRow(row []byte, edge bool) dataRow {
	w, m := n.settings.SaltWidth, n.settings.Widths.Metric
	if edge || len(row) < w+m+4 {
		return dataRow{}
	}
	return dataRow{bucket: row[:w], metric: row[w : w+m], hour: int64(binary.BigEndian.Uint32(row[w+m:])), ok: true}
}

// maxLostLines bounds the lines one lost range prints.
const maxLostLines = 200

// reportData prints, salt bucket by salt bucket, one line per metric with
// rows in the lost range: its hours from the first lost row's, to the last
// one's, or every hour for the metrics between.
func (n *repairNames) reportData(ctx context.Context, out io.Writer, l pebble.LostRows) {
	a, b := n.parseRow(l.FromRow, l.FromStart), n.parseRow(l.ToRow, l.ToEnd)
	w := n.settings.SaltWidth
	first, last := make([]byte, w), make([]byte, w)
	if sl, err := salt.New(w, n.settings.SaltBuckets); err == nil {
		sl.PutBucket(last, n.settings.SaltBuckets-1)
	}
	if a.ok {
		first = a.bucket
	}
	if b.ok {
		last = b.bucket
	}
	lines := 0
	for bucket := first; bytes.Compare(bucket, last) <= 0 && lines < maxLostLines; bucket = nextBucket(bucket) {
		lo, hi := dataRow{}, dataRow{}
		if a.ok && bytes.Equal(bucket, a.bucket) {
			lo = a
		}
		if b.ok && bytes.Equal(bucket, b.bucket) {
			hi = b
		}
		lines += n.reportBucket(ctx, out, bucket, lo, hi, maxLostLines-lines)
		if len(bucket) == 0 {
			break
		}
	}
	if lines >= maxLostLines {
		fmt.Fprintf(out, "lost data: ... and more rows from %s to %s\n", rowText(l.FromRow, l.FromStart, "the table's start"),
			rowText(l.ToRow, l.ToEnd, "the table's end"))
	}
}

// nextBucket returns the salt prefix after b, or one past the last when b
// is all 0xFF.
func nextBucket(b []byte) []byte {
	out := bytes.Clone(b)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i]++; out[i] != 0 {
			return out
		}
	}
	return append(bytes.Repeat([]byte{0xFF}, len(b)), 0)
}

// reportBucket prints the lost metrics of one salt bucket between lo and
// hi (either a table edge when not ok) and returns the lines printed.
func (n *repairNames) reportBucket(ctx context.Context, out io.Writer, bucket []byte, lo, hi dataRow, room int) int {
	where := ""
	if len(bucket) > 0 {
		where = fmt.Sprintf("salt bucket %X: ", bucket)
	}
	if lo.ok && hi.ok && bytes.Equal(lo.metric, hi.metric) {
		fmt.Fprintf(out, "lost data: %smetric %s hours %s to %s\n", where, n.metricName(ctx, lo.metric), hourText(lo.hour), hourText(hi.hour))
		return 1
	}
	lines := 0
	if lo.ok {
		fmt.Fprintf(out, "lost data: %smetric %s hours from %s\n", where, n.metricName(ctx, lo.metric), hourText(lo.hour))
		lines++
	}
	between := n.metricsBetween(ctx, lo.metric, hi.metric)
	if len(between) == 0 && !adjacent(lo, hi) {
		// The UID table cannot list them (its rows were lost too).
		fmt.Fprintf(out, "lost data: %severy hour of every metric with a UID %s\n", where, uidRange(lo, hi))
		lines++
	}
	for i, name := range between {
		if lines == room-1 && i < len(between)-1 {
			fmt.Fprintf(out, "lost data: %s... every hour of %d more metrics\n", where, len(between)-i)
			return room
		}
		fmt.Fprintf(out, "lost data: %smetric %s every hour\n", where, name)
		lines++
	}
	if hi.ok {
		fmt.Fprintf(out, "lost data: %smetric %s hours to %s\n", where, n.metricName(ctx, hi.metric), hourText(hi.hour))
		lines++
	}
	return lines
}

// adjacent reports whether no metric UID lies between lo's and hi's.
func adjacent(lo, hi dataRow) bool {
	if !lo.ok || !hi.ok {
		return false
	}
	a, _, err1 := uid.ParseID(lo.metric, len(lo.metric))
	b, _, err2 := uid.ParseID(hi.metric, len(hi.metric))
	return err1 == nil && err2 == nil && b <= a+1
}

// uidRange says which metric UIDs lie between lo and hi.
func uidRange(lo, hi dataRow) string {
	switch {
	case lo.ok && hi.ok:
		return fmt.Sprintf("between %X and %X", lo.metric, hi.metric)
	case lo.ok:
		return fmt.Sprintf("above %X", lo.metric)
	case hi.ok:
		return fmt.Sprintf("below %X", hi.metric)
	}
	return "(all of them)"
}

// metricName is "name (UID)", or the UID alone when the UID table cannot
// name it.
func (n *repairNames) metricName(ctx context.Context, m []byte) string {
	if n.u != nil {
		if id, _, err := uid.ParseID(m, len(m)); err == nil {
			if name, err := n.u.Name(ctx, uid.Metric, id); err == nil {
				return fmt.Sprintf("%s (%X)", name, m)
			}
		}
	}
	return fmt.Sprintf("%X (name unknown)", m)
}

// metricsBetween names the metrics whose UIDs lie strictly between a and b
// (nil: no bound), from the UID table's reverse map.
func (n *repairNames) metricsBetween(ctx context.Context, a, b []byte) []string {
	if n.uidTbl == nil {
		return nil
	}
	var start []byte
	if a != nil {
		start = append(bytes.Clone(a), 0)
	}
	sc := n.uidTbl.Scan(ctx, &storage.ScanOptions{Start: start, Stop: b, ReadOptions: storage.ReadOptions{
		Families: []string{uid.FamilyName}, Qualifiers: [][]byte{[]byte(uid.Metric.String())}}})
	defer sc.Close()
	var out []string
	for sc.Next() {
		row := sc.Row()
		if len(row.Key) != n.settings.Widths.Metric {
			continue
		}
		for _, c := range row.Cells {
			out = append(out, fmt.Sprintf("%s (%X)", c.Value, c.Row))
		}
	}
	return out
}

func hourText(s int64) string { return time.Unix(s, 0).UTC().Format("2006-01-02T15:04Z") }

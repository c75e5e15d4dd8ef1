package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tsd-db/tsd/query/agg"
	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/salt"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// scanUsage documents `tsd scan`, OpenTSDB's `tsdb scan` without --delete
// and --import.
const scanUsage = `Usage: tsd scan [--config FILE] [--KEY=VALUE]... START [END] [AGGREGATOR [rate]] METRIC [TAGK=TAGV]...

Prints the raw rows of METRIC whose hour overlaps [START, END], from every
salt bucket, with each cell's bytes and the points they decode to. On the
embedded engine the daemon must be stopped first: the store is locked while
it runs. Settings are the daemon's keys; the format, salt and UID widths come
from the store's record (a store without one, an OpenTSDB table, takes them
from the flags, e.g. --tsd.storage.salt.width=0).

Times: now, <N><unit>-ago (units ms s m h d w n y), epoch seconds (up to 10
digits) or milliseconds (more digits, or SECONDS.mmm), or yyyy/MM/dd,
yyyy/MM/dd-HH:mm or yyyy/MM/dd-HH:mm:ss in local time. END defaults to now.
A metric named like a time needs END given. AGGREGATOR and rate are accepted
as OpenTSDB's query syntax has them, and ignored. TAGK=TAGV keeps rows with
that tag; TAGK=* keeps rows having TAGK.

Output, one block per row in bucket then key order (hex is uppercase):
  row ROWKEYHEX METRIC BASE_SECONDS BASE_UTC {TAGK=TAGV, ...}
    cell q=QUALIFIERHEX v=VALUEHEX written=CELL_MS KIND [details]
      T_MS T_UTC VALUE TYPE               one line per decoded point
    CORRUPT row ROWKEYHEX q=QUALIFIERHEX: ERROR
  scanned N buckets: R rows, C cells, P points, K corrupt
KIND is single, compacted, appends, dense, annotation, histogram or other;
TYPE is int, float32 or float64. A corrupt cell or row key is reported and
skipped; the scan goes on, and tsd scan then exits 1.

Flags:
  --help, -h                  print this help
`

// scanCmd is the parsed `tsd scan` command line.
type scanCmd struct {
	args []string // positional: times, query words, tags
	help bool
}

// scanQuery is what the positional arguments ask for.
type scanQuery struct {
	startMs, endMs int64
	metric         string
	tags           []scanTag
}

// scanTag is one TAGK=TAGV filter; value "*" matches any value.
type scanTag struct{ key, value string }

// runScan is `tsd scan ...`: it loads the daemon's settings, opens the store
// read-only and prints the rows.
func runScan(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	sc, cl, err := parseScanArgs(args, c.isBoolFlag)
	if err != nil {
		fmt.Fprintf(stderr, "tsd scan: %v\nRun 'tsd scan --help' for usage.\n", err)
		return exitUsage
	}
	if sc.help || len(sc.args) == 0 {
		fmt.Fprint(stdout, scanUsage)
		if sc.help {
			return exitOK
		}
		return exitUsage
	}
	q, err := parseScanQuery(sc.args, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "tsd scan: %v\nRun 'tsd scan --help' for usage.\n", err)
		return exitUsage
	}
	return runTool("tsd scan", "tsd scan", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return q.run(ctx, c, log, stdout)
	})
}

// parseScanArgs separates positional arguments, scan's own flags and
// configuration flags. Positional arguments never start with '-' (times
// are never negative).
func parseScanArgs(args []string, isBool func(string) bool) (scanCmd, cmdline, error) {
	var sc scanCmd
	var err error
	var cl cmdline
	sc.args, sc.help, cl, err = parseToolArgs(args, "scan", isBool, func(name string) (bool, error) {
		if name == "delete" || name == "import" {
			return false, fmt.Errorf("--%s is not supported: tsd scan only prints rows", name)
		}
		return false, nil
	})
	return sc, cl, err
}

// parseScanQuery reads START [END] [AGGREGATOR [rate]] METRIC [TAGK=TAGV]...
func parseScanQuery(a []string, now time.Time) (scanQuery, error) {
	var q scanQuery
	if len(a) < 2 {
		return q, errors.New("usage: START [END] [AGGREGATOR [rate]] METRIC [TAGK=TAGV]...")
	}
	var err error
	if q.startMs, err = parseScanTime(a[0], now); err != nil {
		return q, fmt.Errorf("start time: %w", err)
	}
	a = a[1:]
	q.endMs = now.UnixMilli()
	// END is there when the argument after START reads as a time and
	// something follows it that can be the metric.
	if len(a) >= 2 && !strings.Contains(a[1], "=") {
		if end, err := parseScanTime(a[0], now); err == nil {
			q.endMs, a = end, a[1:]
		}
	}
	if q.endMs < q.startMs {
		return q, fmt.Errorf("end time %d is before start time %d", q.endMs, q.startMs)
	}
	words := 0
	for words < len(a) && !strings.Contains(a[words], "=") {
		words++
	}
	if err := checkQueryWords(a[:words]); err != nil {
		return q, err
	}
	q.metric = a[words-1]
	for _, t := range a[words:] {
		k, v, _ := strings.Cut(t, "=")
		if k == "" || v == "" || strings.Contains(v, "=") {
			return q, fmt.Errorf("bad tag %q: want TAGK=TAGV", t)
		}
		q.tags = append(q.tags, scanTag{key: k, value: v})
	}
	return q, nil
}

// checkQueryWords accepts [AGGREGATOR [rate]] METRIC; scan ignores all
// but the metric, as OpenTSDB's does.
func checkQueryWords(w []string) error {
	switch {
	case len(w) == 0:
		return errors.New("missing METRIC")
	case len(w) > 3:
		return fmt.Errorf("unexpected argument %q: want [AGGREGATOR [rate]] METRIC", w[1])
	case len(w) >= 2:
		if _, ok := agg.Lookup(w[0]); !ok {
			return fmt.Errorf("unexpected argument %q: not an aggregator (want [AGGREGATOR [rate]] METRIC)", w[0])
		}
		if len(w) == 3 && w[1] != "rate" && !strings.HasPrefix(w[1], "rate{") {
			return fmt.Errorf("unexpected argument %q: want rate", w[1])
		}
	}
	return nil
}

var (
	scanDigits  = regexp.MustCompile(`^[0-9]+$`)
	scanDotted  = regexp.MustCompile(`^([0-9]{10})\.([0-9]{1,3})$`)
	dateLayouts = []string{"2006/01/02-15:04:05", "2006/01/02 15:04:05", "2006/01/02-15:04", "2006/01/02 15:04", "2006/01/02"}
)

// parseScanTime reads OpenTSDB's time forms (docs/opentsdb.md, HTTP API)
// into milliseconds.
func parseScanTime(s string, now time.Time) (int64, error) {
	var ms int64
	switch {
	case s == "now":
		ms = now.UnixMilli()
	case strings.HasSuffix(s, "-ago"):
		d, err := agg.ParseDuration(strings.TrimSuffix(s, "-ago"))
		if err != nil {
			return 0, fmt.Errorf("%q: %w", s, err)
		}
		ms = now.UnixMilli() - d
	case scanDigits.MatchString(s):
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: out of range", s)
		}
		if len(s) <= 10 {
			n *= 1000
		}
		ms = n
	case scanDotted.MatchString(s):
		m := scanDotted.FindStringSubmatch(s)
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		frac, _ := strconv.ParseInt((m[2] + "00")[:3], 10, 64)
		ms = sec*1000 + frac
	default:
		t, err := parseScanDate(s)
		if err != nil {
			return 0, err
		}
		ms = t.UnixMilli()
	}
	if ms < 0 || ms > rowkey.MaxTimestamp {
		return 0, fmt.Errorf("%q: out of range (0 to %d ms)", s, int64(rowkey.MaxTimestamp))
	}
	return ms, nil
}

func parseScanDate(s string) (time.Time, error) {
	for _, l := range dateLayouts {
		if len(s) == len(l) {
			if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("%q: not a time (want now, <N><unit>-ago, epoch seconds or ms, or yyyy/MM/dd[-HH:mm[:ss]])", s)
}

// run opens the store without writing and prints the rows.
func (q *scanQuery) run(ctx context.Context, c *config, log *slog.Logger, out io.Writer) (int, error) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return exitFailed, err
	}
	defer db.Close()
	s, err := q.newScan(ctx, c, db, log, out)
	if err != nil {
		return exitFailed, err
	}
	if err := s.scan(ctx); err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(out, "scanned %d buckets: %d rows, %d cells, %d points, %d corrupt\n",
		s.buckets, s.rows, s.cells, s.points, s.corrupt)
	if s.corrupt > 0 {
		return exitFailed, fmt.Errorf("%d corrupt cells or row keys skipped (see the CORRUPT lines)", s.corrupt)
	}
	return exitOK, nil
}

// scan is one running `tsd scan`: the store, the decoded query and the
// counters of the summary line.
type scan struct {
	q       *scanQuery
	u       *uid.UIDs
	data    storage.Table
	layout  rowkey.Layout
	metric  []byte
	filters []tagFilter
	out     io.Writer
	buckets int
	dense   rowkey.DenseIter
	pts     []series.Point
	line    []byte
	rows    int
	cells   int
	points  int
	corrupt int
}

// tagFilter is a scanTag as UIDs; a nil value matches any value.
type tagFilter struct{ key, value []byte }

// newScan reads the store's record, then resolves the metric and tags.
func (q *scanQuery) newScan(ctx context.Context, c *config, db storage.DB, log *slog.Logger, out io.Writer) (*scan, error) {
	uidTbl, err := db.Table(ctx, c.uidTable)
	if err != nil {
		return nil, fmt.Errorf("open the UID table (is %s a tsd store?): %w", c.dataDir, err)
	}
	st, err := storeRecord(ctx, c, db, uidTbl, false)
	if err != nil {
		return nil, err
	}
	u, err := uid.New(uidTbl, &uid.Options{Widths: st.Widths, Format: st.Format, Logger: log})
	if err != nil {
		return nil, err
	}
	sl, err := salt.New(st.SaltWidth, st.SaltBuckets)
	if err != nil {
		return nil, err
	}
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return nil, fmt.Errorf("open the data table %s: %w", c.dataTable, err)
	}
	s := &scan{q: q, u: u, data: data, out: out, layout: rowkey.Layout{Widths: st.Widths, Salt: sl}}
	s.layout.EnsureDefaults()
	s.buckets = s.layout.Buckets()
	if s.metric, err = s.lookup(ctx, uid.Metric, q.metric); err != nil {
		return nil, err
	}
	for _, t := range q.tags {
		var f tagFilter
		if f.key, err = s.lookup(ctx, uid.TagK, t.key); err != nil {
			return nil, err
		}
		if t.value != "*" {
			if f.value, err = s.lookup(ctx, uid.TagV, t.value); err != nil {
				return nil, err
			}
		}
		s.filters = append(s.filters, f)
	}
	return s, nil
}

func (s *scan) lookup(ctx context.Context, k uid.Kind, name string) ([]byte, error) {
	id, err := s.u.Lookup(ctx, k, []byte(name))
	if err != nil {
		return nil, err
	}
	return s.u.AppendID(nil, k, id), nil
}

// scan reads every bucket's key range in turn.
func (s *scan) scan(ctx context.Context) error {
	for b := 0; b < s.buckets; b++ {
		if err := s.scanBucket(ctx, b); err != nil {
			return fmt.Errorf("bucket %d: %w", b, err)
		}
	}
	return nil
}

// scanBucket prints the bucket's rows of the metric from the hour of
// start through the hour of end.
func (s *scan) scanBucket(ctx context.Context, b int) error {
	start, stop := s.layout.BucketRange(b, s.metric, s.q.startMs, s.q.endMs)
	opts := &storage.ScanOptions{
		Start:         start,
		Stop:          stop,
		MaxBatchBytes: scanBatchBytes,
		ReadOptions:   storage.ReadOptions{Families: []string{dataFamily}},
	}
	sc := s.data.Scan(ctx, opts)
	defer sc.Close()
	var p rowPrint
	for sc.Next() {
		if err := s.printBatch(ctx, &p, sc.Row()); err != nil {
			return err
		}
	}
	return sc.Close()
}

// scanBatchBytes is the scans' MaxBatchBytes: 0, the store's default. The
// tests set it to print rows that arrive in several batches.
var scanBatchBytes int

// dataFamily is the data table's one family (docs/formats.md, Tables and
// families).
const dataFamily = "t"

// rowPrint is what scanBucket knows of the row it prints, whose cells may
// come in several batches.
type rowPrint struct {
	more   bool  // the last batch was Partial: the next continues its row
	base   int64 // the row's base time in seconds
	skip   bool  // another series than the query's
	keyErr error // the key does not parse: the row's cells are counted, then reported
	cells  int
}

// printBatch prints a row's header line at its first batch, then the
// batch's cells, or reports a row whose key is corrupt at its last batch.
func (s *scan) printBatch(ctx context.Context, p *rowPrint, row storage.Row) error {
	if !p.more {
		if err := s.printRow(ctx, p, row.Key); err != nil {
			return err
		}
	}
	p.more = row.Partial
	switch {
	case p.keyErr != nil:
		if p.cells += len(row.Cells); row.Partial {
			return nil
		}
		s.corrupt++
		_, err := fmt.Fprintf(s.out, "CORRUPT row %X: %v (%d cells skipped)\n", row.Key, p.keyErr, p.cells)
		return err
	case p.skip:
		return nil
	}
	for _, c := range row.Cells {
		if err := s.printCell(row.Key, p.base, c); err != nil {
			return err
		}
	}
	return nil
}

// printRow begins a row: it prints the row's line, or notes that the row
// is another series' or that its key is corrupt.
func (s *scan) printRow(ctx context.Context, p *rowPrint, row []byte) error {
	*p = rowPrint{}
	k, err := s.layout.ParseRowKey(row)
	if err != nil {
		p.keyErr = err
		return nil
	}
	if !bytes.Equal(k.Metric, s.metric) || !s.matches(&k) {
		p.skip = true
		return nil
	}
	p.base = k.Base
	s.rows++
	s.line = fmt.Appendf(s.line[:0], "row %X ", row)
	s.line, err = s.appendName(ctx, s.line, uid.Metric, k.Metric)
	if err != nil {
		return err
	}
	s.line = fmt.Appendf(s.line, " %d %s {", k.Base, utc(k.BaseMs()))
	for i := 0; i < k.NumTags(); i++ {
		tk, tv := k.Tag(i)
		if i > 0 {
			s.line = append(s.line, ", "...)
		}
		if s.line, err = s.appendName(ctx, s.line, uid.TagK, tk); err != nil {
			return err
		}
		s.line = append(s.line, '=')
		if s.line, err = s.appendName(ctx, s.line, uid.TagV, tv); err != nil {
			return err
		}
	}
	s.line = append(s.line, "}\n"...)
	_, err = s.out.Write(s.line)
	return err
}

// matches applies the tag filters.
func (s *scan) matches(k *rowkey.Key) bool {
	for _, f := range s.filters {
		found := false
		for i := 0; i < k.NumTags() && !found; i++ {
			tk, tv := k.Tag(i)
			found = bytes.Equal(tk, f.key) && (f.value == nil || bytes.Equal(tv, f.value))
		}
		if !found {
			return false
		}
	}
	return true
}

// appendName appends the name of a UID, or the UID in brackets when the
// UID table has no name for it (the row still prints).
func (s *scan) appendName(ctx context.Context, dst []byte, k uid.Kind, b []byte) ([]byte, error) {
	id, _, err := uid.ParseID(b, len(b))
	if err == nil {
		var name string
		if name, err = s.u.Name(ctx, k, id); err == nil {
			return append(dst, name...), nil
		}
	}
	if errors.Is(err, uid.ErrNoSuchID) {
		return fmt.Appendf(dst, "[%s %X]", k, b), nil
	}
	return dst, err
}

// printCell prints a cell and its points, or reports it as corrupt. The
// cell's write time is printed in milliseconds.
func (s *scan) printCell(row []byte, base int64, c rowkey.Cell) error {
	s.cells++
	kind, detail, err := s.decodeCell(base, c)
	written := c.Timestamp / 1000
	if err != nil {
		s.corrupt++
		_, err = fmt.Fprintf(s.out, "  CORRUPT row %X q=%X: cell v=%X written=%d: %v\n", row, c.Qualifier, c.Value, written, err)
		return err
	}
	s.line = fmt.Appendf(s.line[:0], "  cell q=%X v=%X written=%d %s%s\n", c.Qualifier, c.Value, written, kind, detail)
	for _, p := range s.pts {
		s.line = appendPoint(s.line, p)
	}
	s.points += len(s.pts)
	_, err = s.out.Write(s.line)
	return err
}

// decodeCell decodes c into s.pts by its column kind and returns the kind's
// name and details for the cell line.
func (s *scan) decodeCell(base int64, c rowkey.Cell) (string, string, error) {
	s.pts = s.pts[:0]
	var err error
	switch rowkey.Classify(c.Qualifier) {
	case rowkey.ColumnSingle:
		var p series.Point
		if p, err = rowkey.ParseSingle(base, c.Qualifier, c.Value); err == nil {
			s.pts = append(s.pts, p)
		}
		return "single", "", err
	case rowkey.ColumnCompacted:
		s.pts, err = rowkey.ParseCompacted(s.pts, base, c.Qualifier, c.Value)
		return "compacted", "", err
	case rowkey.ColumnAppends:
		s.pts, err = rowkey.ParseAppends(s.pts, base, c.Value)
		return "appends", "", err
	case rowkey.ColumnDense:
		writer, seq, err := rowkey.ParseDenseQualifier(c.Qualifier)
		if err != nil {
			return "dense", "", err
		}
		s.pts, err = s.dense.DecodeDense(s.pts, base, c.Value)
		return "dense", fmt.Sprintf(" writer=%d seq=%d", writer, seq), err
	case rowkey.ColumnAnnotation:
		off, err := rowkey.ParseAnnotationQualifier(c.Qualifier)
		t := base*1000 + off
		return "annotation", fmt.Sprintf(" t=%d %s %q", t, utc(t), c.Value), err
	case rowkey.ColumnHistogram:
		off, err := rowkey.ParseHistogramQualifier(c.Qualifier)
		t := base*1000 + off
		return "histogram", fmt.Sprintf(" t=%d %s (not decoded)", t, utc(t)), err
	}
	return "other", " (not a data column, skipped)", nil
}

// appendPoint appends a point line: time in ms and UTC, value, type.
func appendPoint(dst []byte, p series.Point) []byte {
	dst = fmt.Appendf(dst, "    %d %s ", p.T, utc(p.T))
	switch p.Kind {
	case series.Int:
		dst = strconv.AppendInt(dst, p.Int(), 10)
		dst = append(dst, " int"...)
	case series.Float32:
		dst = strconv.AppendFloat(dst, p.Float(), 'g', -1, 32)
		dst = append(dst, " float32"...)
	default:
		dst = strconv.AppendFloat(dst, p.Float(), 'g', -1, 64)
		dst = append(dst, " float64"...)
	}
	return append(dst, '\n')
}

// utc formats ms as an RFC 3339 UTC time with milliseconds.
func utc(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

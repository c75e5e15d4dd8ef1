package pebble

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// Pebble replays its log (NNNNNN.log) at open, and it refuses to open when
// a record there is damaged: with WAL sync chunks it can tell damage from
// the torn end a crash leaves, and the records after the damage cannot be
// replayed through it. The store then salvages the log instead of staying
// shut, as tsd's own write-ahead log does at replay:
//
//  1. Every intact record of the log is read: after a damaged chunk,
//     reading starts again at the next 32 KiB block of the file (a chunk
//     never crosses one), skipping the rest of the record it broke.
//  2. They are written, in order, as a log of the same number ending with
//     the EOF trailer of a clean close, in memory.
//  3. The damaged file is kept as NNNNNN.log.damaged: pebble and the store
//     ignore that name, and it stays for the operator.
//  4. The salvaged log replaces the damaged one (durable.WriteFile:
//     temporary file, sync, rename, directory sync).
//
// A crash at any point leaves either the damaged log, salvaged again at the
// next open, or the salvaged one. The records in damaged chunks are lost,
// whatever they held; each salvage is one ERROR line and DB.SalvagedLogs.

// logBlockSize is the block size of pebble's log: chunks never cross a
// block boundary, so a reader can start again at any multiple of it.
const logBlockSize = 32 << 10

// SalvagedLog is a damaged pebble log that Open rewrote without its damaged
// records.
type SalvagedLog struct {
	// Path is the log; the damaged original was kept as Path + ".damaged".
	Path string
	// Records is how many intact records were kept.
	Records int
	// Damaged holds one file offset a damaged place: the 32 KiB block
	// where the damaged record, or the first record reading met damage in,
	// starts. The rest of that block is lost with it.
	Damaged []int64
}

// SalvagedLogs returns the damaged logs pebble's opens rewrote since Open.
func (d *DB) SalvagedLogs() []SalvagedLog {
	d.salvagedMu.Lock()
	defer d.salvagedMu.Unlock()
	return slices.Clone(d.salvaged)
}

// isLogDamage reports whether pebble's open failed on a damaged log: a
// chunk its replay could not read, or an older log cut off before its end.
func isLogDamage(err error) bool {
	return errors.Is(err, record.ErrInvalidChunk) || errors.Is(err, record.ErrZeroedChunk) ||
		errors.Is(err, record.ErrUnexpectedEOF)
}

// salvageLogs rewrites every damaged log of d's directory (steps 1 to 4)
// and returns what it salvaged. A log that stops without its EOF trailer
// is damaged unless it is the newest, whose torn end a crash leaves.
func (d *DB) salvageLogs() ([]SalvagedLog, error) {
	fs := d.opts.FS
	names, err := fs.List(d.dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.dir, err)
	}
	type logFile struct {
		name string
		num  uint64
	}
	var logs []logFile
	for _, name := range names {
		if num, ok := parseLogName(name); ok {
			logs = append(logs, logFile{name, num})
		}
	}
	slices.SortFunc(logs, func(a, b logFile) int { return cmp.Compare(a.num, b.num) })
	var out []SalvagedLog
	for i, l := range logs {
		path := fs.PathJoin(d.dir, l.name)
		data, err := readFile(fs, path)
		if err != nil {
			return out, fmt.Errorf("read %s: %w", path, err)
		}
		recs, damaged, err := readLog(data, l.num, i < len(logs)-1)
		if err != nil {
			return out, fmt.Errorf("read %s: %w", path, err)
		}
		if len(damaged) == 0 {
			continue
		}
		if err := rewriteLog(fs, path, l.num, data, recs); err != nil {
			return out, err
		}
		s := SalvagedLog{Path: path, Records: len(recs), Damaged: damaged}
		d.opts.Logger.Error("pebble log damaged: salvaged without its damaged records, the original kept beside it",
			"file", path, "kept", path+".damaged", "records", s.Records, "damaged_at", s.Damaged)
		out = append(out, s)
	}
	return out, nil
}

// readLog reads every intact record of the log data (step 1). damaged
// holds the offset of each block where reading met damage, and with
// tornIsDamage where the log stops before its EOF trailer.
func readLog(data []byte, num uint64, tornIsDamage bool) (recs [][]byte, damaged []int64, err error) {
	start := int64(0)
	for start < int64(len(data)) {
		r := newLogReader(data[start:], num)
		var at int64
		for {
			at = start + r.Offset()
			var rec []byte
			if rec, err = nextRecord(r); err != nil {
				break
			}
			recs = append(recs, rec)
		}
		block := at - at%logBlockSize
		// A reader that starts again after damage and fails before its
		// first record met the same damaged place: a record begun in the
		// block before, broken in this one.
		same := len(damaged) > 0 && at == start && damaged[len(damaged)-1] == start-logBlockSize
		if same {
			damaged = damaged[:len(damaged)-1]
		}
		switch {
		case errors.Is(err, io.EOF):
			return recs, damaged, nil
		case errors.Is(err, record.ErrInvalidChunk) || errors.Is(err, record.ErrZeroedChunk):
			// A later chunk shows the log went on: damage. Read again from
			// the next block.
			damaged = append(damaged, block)
			start = block + logBlockSize
		case errors.Is(err, record.ErrUnexpectedEOF):
			// Nothing readable after it: the log's end.
			if tornIsDamage || same {
				damaged = append(damaged, block)
			}
			return recs, damaged, nil
		default:
			return nil, nil, fmt.Errorf("at %d: %w", at, err)
		}
	}
	return recs, damaged, nil
}

// nextRecord reads r's next record whole.
func nextRecord(r *record.Reader) ([]byte, error) {
	rr, err := r.Next()
	if err != nil {
		return nil, err
	}
	return io.ReadAll(rr)
}

// rewriteLog is steps 2 to 4 for the log at path, whose damaged bytes
// are data.
func rewriteLog(fs vfs.FS, path string, num uint64, data []byte, recs [][]byte) error {
	var log bytes.Buffer
	w := newLogWriter(&log, num)
	for _, rec := range recs {
		if _, err := w.WriteRecord(rec); err != nil {
			w.Close()
			return fmt.Errorf("salvage %s: %w", path, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("salvage %s: %w", path, err)
	}
	if err := durable.WriteFile(fs, path+".damaged", data, vfs.WriteCategoryUnspecified); err != nil {
		return fmt.Errorf("keep %s: %w", path, err)
	}
	if err := durable.WriteFile(fs, path, log.Bytes(), vfs.WriteCategoryUnspecified); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// newLogReader and newLogWriter call record.NewReader and
// record.NewLogWriter, whose log number is of a type in pebble's internal
// base package, which no other module can name: reflection converts it.
func newLogReader(data []byte, num uint64) *record.Reader {
	fn := reflect.ValueOf(record.NewReader)
	out := fn.Call([]reflect.Value{
		reflect.ValueOf(io.Reader(bytes.NewReader(data))),
		reflect.ValueOf(num).Convert(fn.Type().In(1)),
	})
	return out[0].Interface().(*record.Reader)
}

func newLogWriter(w io.Writer, num uint64) *record.LogWriter {
	fn := reflect.ValueOf(record.NewLogWriter)
	cfg := record.LogWriterConfig{WriteWALSyncOffsets: func() bool { return true }}
	out := fn.Call([]reflect.Value{
		reflect.ValueOf(w),
		reflect.ValueOf(num).Convert(fn.Type().In(1)),
		reflect.ValueOf(cfg),
	})
	return out[0].Interface().(*record.LogWriter)
}

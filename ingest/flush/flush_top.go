package flush

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

const topFileName = "FLUSHTOP"

// flushTop keeps, in FLUSHTOP in the log directory, a bound on the hours
// any flush of this directory wrote: every row written ended (base + one
// hour) at or before it. It is moved up durably before a batch holding a
// later hour is written, so after a crash it still covers what is stored.
// A restarted flusher trusts the head's points as a row's whole set only
// for hours at or after it: an earlier process may have written a later
// hour early (at shutdown, or a client's clock ahead of ours), and this
// process's head does not know. In steady state it moves once an hour.
//
// The file holds the bound (8 bytes, big-endian, Unix ms) and the CRC-32C
// of those bytes; a file that does not check out leaves the bound unknown,
// and the flusher then trusts no head row until it restarts.
type flushTop struct {
	fs  vfs.FS
	dir string
	top int64 // durable bound, ms; 0: none written
	// unknown says the file was damaged: nothing written before this
	// process can be bounded.
	unknown bool
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// openFlushTop reads the bound in dir (none when absent).
func openFlushTop(fs vfs.FS, dir string) (*flushTop, error) {
	t := &flushTop{fs: fs, dir: dir}
	f, err := fs.Open(fs.PathJoin(dir, topFileName))
	if errors.Is(err, os.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: open %s: %w", topFileName, err)
	}
	defer f.Close()
	var b [12]byte
	n, err := io.ReadFull(f, b[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("ingest: read %s: %w", topFileName, err)
	}
	if n != len(b) || crc32.Checksum(b[:8], crcTable) != binary.BigEndian.Uint32(b[8:]) {
		t.unknown = true
		return t, nil
	}
	t.top = int64(binary.BigEndian.Uint64(b[:8]))
	return t, nil
}

// floor returns the first hour a flusher started at nowMs may take the
// head's points of as a row's whole set.
func (t *flushTop) floor(nowMs int64) int64 {
	if t.unknown {
		return 1<<63 - 1
	}
	return max(nowMs, t.top)
}

// raise durably records that hours ending at hi may be written.
func (t *flushTop) raise(hi int64) error {
	if hi <= t.top {
		return nil
	}
	var b [12]byte
	binary.BigEndian.PutUint64(b[:8], uint64(hi))
	binary.BigEndian.PutUint32(b[8:], crc32.Checksum(b[:8], crcTable))
	if err := durable.WriteFile(t.fs, t.fs.PathJoin(t.dir, topFileName), b[:], vfs.DiskWriteCategory("tsd-"+topFileName)); err != nil {
		return fmt.Errorf("ingest: record flushed hours: %w", err)
	}
	t.top = hi
	return nil
}

package flush

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// WriterIDFile is the file in the data directory that holds the daemon's
// writer id: two lines, each the id and its CRC-32C (of the id's 4
// big-endian bytes) as eight lowercase hex digits, a space between
// (guarded.go). A file of one line, the id alone, is what tsd wrote
// before; it is read as it is and rewritten guarded.
const WriterIDFile = "WRITERID"

// LoadWriterID returns the writer id kept in dir on fs, creating it on first
// use: a random non-zero uint32, written atomically (temporary file, sync,
// rename, directory sync) before it is returned, so a daemon keeps its id
// across restarts and crashes. Dense qualifiers carry it (FlushOptions
// WriterID); two daemons sharing a store must have different data
// directories. A file that does not hold a valid id is an error naming it,
// never silently replaced: another id would make this writer's old columns
// look like a stranger's.
func LoadWriterID(fs vfs.FS, dir string) (uint32, error) {
	path := fs.PathJoin(dir, WriterIDFile)
	id, rewrite, err := readWriterID(fs, path)
	if err == nil && rewrite {
		// One line damaged, or the unguarded form: both lines again.
		if err := durable.WriteFile(fs, fs.PathJoin(dir, WriterIDFile), appendWriterID(nil, id), vfs.DiskWriteCategory("tsd-"+WriterIDFile)); err != nil {
			return 0, fmt.Errorf("ingest: write %s: %w", path, err)
		}
	}
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return id, err
	}
	if err := mkdirDurable(fs, dir); err != nil {
		return 0, fmt.Errorf("ingest: writer id: %w", err)
	}
	for id == 0 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("ingest: writer id: %w", err)
		}
		id = binary.BigEndian.Uint32(b[:])
	}
	if err := durable.WriteFile(fs, fs.PathJoin(dir, WriterIDFile), appendWriterID(nil, id), vfs.DiskWriteCategory("tsd-"+WriterIDFile)); err != nil {
		return 0, fmt.Errorf("ingest: write %s: %w", path, err)
	}
	return id, nil
}

// guardedLine is the length of one line of WRITERID: id, space, sum,
// newline.
const guardedLine = 18

func appendWriterID(dst []byte, id uint32) []byte {
	for range 2 {
		dst = fmt.Appendf(dst, "%08x %08x\n", id, guardSum(id))
	}
	return dst
}

// readWriterID parses the id file at path, and says whether the file
// should be written again (a damaged line, or the unguarded form); a
// missing file is os.ErrNotExist.
func readWriterID(fs vfs.FS, path string) (id uint32, rewrite bool, err error) {
	f, err := fs.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 128))
	if err != nil {
		return 0, false, fmt.Errorf("ingest: read %s: %w", path, err)
	}
	if id, ok := parseHexID(strings.TrimSuffix(string(b), "\n")); ok {
		return id, true, nil // the unguarded form
	}
	if len(b) == 2*guardedLine {
		// Each copy at its place, so a damaged separator spoils neither.
		var vals [2]uint32
		var ok [2]bool
		for i := range vals {
			l := string(b[i*guardedLine:])
			var okV, okS bool
			var sum uint32
			vals[i], okV = parseHexID(l[:8])
			sum, okS = parseHex8(l[9:17])
			ok[i] = okV && okS && sum == guardSum(vals[i])
		}
		if id, _, err := pickGuarded(vals[:], ok[:]); err == nil {
			// Any byte not as tsd writes it, a separator too: rewrite.
			return id, string(b) != string(appendWriterID(nil, id)), nil
		}
	}
	return 0, false, fmt.Errorf("ingest: %s holds %q, not a writer id (two lines of 8 hex digits, not 0, and their CRC-32C; %w)",
		path, b, errGuardDamaged)
}

// parseHexID reads a writer id: 8 hex digits, not 0.
func parseHexID(s string) (uint32, bool) {
	v, ok := parseHex8(s)
	return v, ok && v != 0
}

// parseHex8 reads 8 lowercase hex digits, the only form tsd writes: a
// damaged byte that makes another spelling of the value is damage too.
func parseHex8(s string) (uint32, bool) {
	if len(s) != 8 || strings.IndexFunc(s, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') }) >= 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 16, 32)
	return uint32(v), err == nil
}

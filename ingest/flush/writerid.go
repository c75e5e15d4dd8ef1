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
)

// WriterIDFile is the file in the data directory that holds the daemon's
// writer id: eight lowercase hex digits and a newline.
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
	id, err := readWriterID(fs, path)
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
	if err := writeFileAtomic(fs, dir, WriterIDFile, appendWriterID(nil, id)); err != nil {
		return 0, fmt.Errorf("ingest: write %s: %w", path, err)
	}
	return id, nil
}

func appendWriterID(dst []byte, id uint32) []byte {
	return fmt.Appendf(dst, "%08x\n", id)
}

// readWriterID parses the id file at path; a missing file is os.ErrNotExist.
func readWriterID(fs vfs.FS, path string) (uint32, error) {
	f, err := fs.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return 0, fmt.Errorf("ingest: read %s: %w", path, err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	id, err := strconv.ParseUint(s, 16, 32)
	if err != nil || len(s) != 8 || id == 0 {
		return 0, fmt.Errorf("ingest: %s holds %q, not a writer id (8 hex digits, not 0)", path, b)
	}
	return uint32(id), nil
}

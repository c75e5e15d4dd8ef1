package flush

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

const (
	seqFileName = "FLUSHSEQ"
	// seqBlock is how many flush numbers one durable reservation covers; a
	// restart skips what is left of the block.
	seqBlock = 1 << 16
)

// flushSeq hands out flush numbers that never repeat for this data
// directory: the file holds a bound no number handed out reaches, moved up a
// block at a time, durably, before the block is used.
type flushSeq struct {
	fs  vfs.FS
	dir string

	mu          sync.Mutex
	next, limit uint32 // guarded by mu
}

// openFlushSeq reads the reservation in dir (0 when absent).
func openFlushSeq(fs vfs.FS, dir string) (*flushSeq, error) {
	s := &flushSeq{fs: fs, dir: dir}
	f, err := fs.Open(fs.PathJoin(dir, seqFileName))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: open %s: %w", seqFileName, err)
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return nil, fmt.Errorf("ingest: read %s: %w", seqFileName, err)
	}
	s.next = binary.BigEndian.Uint32(b[:])
	s.limit = s.next
	return s, nil
}

// take returns the next flush number. Numbers wrap after 2^32 flushes;
// two flushes of one row collide only if exactly a multiple of 2^32 flushes
// lie between them.
func (s *flushSeq) take() (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next == s.limit {
		if err := s.reserve(s.limit + seqBlock); err != nil {
			return 0, err
		}
	}
	n := s.next
	s.next++
	return n, nil
}

// reserve durably records limit.
func (s *flushSeq) reserve(limit uint32) error {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], limit)
	if err := writeFileAtomic(s.fs, s.dir, seqFileName, b[:]); err != nil {
		return fmt.Errorf("ingest: reserve flush numbers: %w", err)
	}
	s.limit = limit
	return nil
}

package flush

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
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
//
// The file is the bound twice, each copy 4 bytes big-endian and its
// CRC-32C (guarded.go): 16 bytes. A 4-byte file is the bound alone, as
// tsd wrote it before; it is read as it is and rewritten guarded at the
// next reservation.
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
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return nil, fmt.Errorf("ingest: read %s: %w", seqFileName, err)
	}
	limit, damaged, err := parseFlushSeq(b)
	if err != nil {
		return nil, fmt.Errorf("ingest: %s %w (restore it, or remove it and %s to go on as a new writer)",
			fs.PathJoin(dir, seqFileName), err, WriterIDFile)
	}
	s.next, s.limit = limit, limit
	if damaged {
		// One copy is good: write both again before anything depends on
		// the file.
		if err := s.reserve(limit); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// parseFlushSeq reads the bound from the file's bytes, and whether one of
// its copies was damaged.
func parseFlushSeq(b []byte) (limit uint32, damaged bool, err error) {
	switch len(b) {
	case 4:
		return binary.BigEndian.Uint32(b), false, nil
	case 16:
		var vals [2]uint32
		var ok [2]bool
		for i := range vals {
			c := b[8*i:]
			vals[i] = binary.BigEndian.Uint32(c)
			ok[i] = guardSum(vals[i]) == binary.BigEndian.Uint32(c[4:])
		}
		return pickGuarded(vals[:], ok[:])
	}
	return 0, true, fmt.Errorf("holds %d bytes, want 16: %w", len(b), errGuardDamaged)
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
	var b [16]byte
	for c := b[:]; len(c) > 0; c = c[8:] {
		binary.BigEndian.PutUint32(c, limit)
		binary.BigEndian.PutUint32(c[4:], guardSum(limit))
	}
	if err := durable.WriteFile(s.fs, s.fs.PathJoin(s.dir, seqFileName), b[:], vfs.DiskWriteCategory("tsd-"+seqFileName)); err != nil {
		return fmt.Errorf("ingest: reserve flush numbers: %w", err)
	}
	s.limit = limit
	return nil
}

package pebble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/tsd-db/tsd/storage"
)

// Pebble reads its MANIFEST, the list of every sstable in the store, up to
// the first record it cannot read, and takes that for the torn end of a
// crash. A damaged byte in the middle of the file therefore opened the
// store without every sstable the later records add, nearly always all of
// them, and pebble then deleted those files as obsolete: one flipped bit,
// the whole store gone without a word.
//
// vetManifest reads the MANIFEST before pebble does, once its copy has
// mended what it could (manifestmirror.go). When a record
// cannot be read and a whole record starts after it (a full or first chunk
// whose checksum holds), that record was written after the bad one, which
// pebble only does once the bad one was synced: the bad record is damage,
// not a torn end, and the store is refused with storage.ErrCorruption,
// every file left as it is. A torn end (an edit whose sync a crash cut
// short) has no whole record after it. Damage to the very last record
// looks the same as a torn end and is not found.

// manifestChunk* are the kinds of the MANIFEST's chunks (pebble's record
// package, legacy format) that begin a record.
const (
	manifestChunkFull  = 1
	manifestChunkFirst = 2
	legacyHeaderSize   = 7
)

// vetManifest reads the store's current MANIFEST once, before pebble does
// (desc is pebble.Peek's, nil when Peek failed). A record that cannot be
// read is mended from the MANIFEST's copy where the copy reaches it
// (restoreManifest, unless readOnly); a damaged record left with a whole
// record after it refuses the store with an error wrapping
// storage.ErrCorruption. No store, a readable MANIFEST or a torn end is
// nil; so is a MANIFEST that cannot be read at all, which pebble's open
// reports.
func (d *DB) vetManifest(desc *pebble.DBDesc, readOnly bool) error {
	if desc == nil || !desc.Exists || desc.ManifestFilename == "" {
		return nil
	}
	path := desc.ManifestFilename
	data, err := readFile(d.opts.FS, path)
	if err != nil {
		return nil
	}
	at, bad := firstBadRecord(data)
	if bad && !readOnly {
		mended, err := d.restoreManifest(path, data, at)
		if err != nil {
			return fmt.Errorf("open pebble store %s: mending the MANIFEST from its copy: %w", d.dir, err)
		}
		if mended != nil {
			data = mended
			at, bad = firstBadRecord(data)
		}
	}
	if !bad {
		return nil
	}
	next := nextRecordStart(data, at+1)
	if next < 0 {
		return nil // a torn end
	}
	return fmt.Errorf("open pebble store %s: %w: manifest %s: the record at byte %d is damaged and a whole record follows "+
		"at byte %d; pebble would open the store without every sstable the records after it list, and delete them: "+
		"the store is not opened and no file is changed", d.dir, storage.ErrCorruption, path, at, next)
}

// firstBadRecord reads the records of a MANIFEST and returns the offset of
// the first one that cannot be read, if any.
func firstBadRecord(data []byte) (int64, bool) {
	r := record.NewReader(bytes.NewReader(data), 0)
	for {
		at := r.Offset()
		rr, err := r.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, rr)
		}
		if errors.Is(err, io.EOF) {
			return 0, false
		}
		if err != nil {
			return at, true
		}
	}
}

// nextRecordStart returns the offset of the first chunk at or after from
// that begins a record (full or first) and whose checksum holds, or -1.
// A chunk lies within one 32 KiB block.
func nextRecordStart(data []byte, from int64) int64 {
	for p := max(from, 0); p+legacyHeaderSize <= int64(len(data)); p++ {
		kind := data[p+6]
		if kind != manifestChunkFull && kind != manifestChunkFirst {
			continue
		}
		end := p + legacyHeaderSize + int64(binary.LittleEndian.Uint16(data[p+4:]))
		if end > int64(len(data)) || end > (p/logBlockSize+1)*logBlockSize {
			continue
		}
		if maskedCRC(data[p+6:end]) == binary.LittleEndian.Uint32(data[p:]) {
			return p
		}
	}
	return -1
}

// maskedCRC is the CRC-32C of b, masked as pebble's records store it.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// RecordType is the first byte of a record's checksummed part. A type the
// reader does not know is damage, so every type ever written is listed here.
type RecordType uint8

const (
	// TypeHeader opens every segment: version, segment index and the valid
	// length of the previous segment.
	TypeHeader RecordType = 1
	// TypeSeries defines series by log-local id for the rest of a segment.
	TypeSeries RecordType = 2
	// TypeSamples holds points of series defined earlier in the segment.
	TypeSamples RecordType = 3
	// TypeDelete removes points of series (by key) in a time range from
	// everything replayed before it.
	TypeDelete RecordType = 4
	// TypeSamplesMs holds points as TypeSamples does, each with its
	// millisecond mark (series.Point.Ms). Only a batch that has such a
	// point is written as one, so logs of seconds-only clients stay
	// readable by builds that predate it.
	TypeSamplesMs RecordType = 5
)

// Known reports whether t is a record type this version reads.
func (t RecordType) Known() bool { return t >= TypeHeader && t <= TypeSamplesMs }

// String names the type for logs.
func (t RecordType) String() string {
	switch t {
	case TypeHeader:
		return "header"
	case TypeSeries:
		return "series"
	case TypeSamples:
		return "samples"
	case TypeDelete:
		return "delete"
	case TypeSamplesMs:
		return "samples-ms"
	}
	return "unknown"
}

// HeaderSize is the fixed framing before a record's payload:
// length (4 bytes), CRC32C (4 bytes) and type (1 byte).
const HeaderSize = 9

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// BeginRecord appends the framing of a record of type t to dst and returns
// dst with the offset where the record starts. Append the payload to dst,
// then call FinishRecord with that offset.
func BeginRecord(dst []byte, t RecordType) ([]byte, int) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0, byte(t))
	return dst, start
}

// FinishRecord fills in the length and checksum of the record that starts at
// start and runs to the end of b.
func FinishRecord(b []byte, start int) {
	rec := b[start:]
	binary.LittleEndian.PutUint32(rec[0:4], uint32(len(rec)-HeaderSize))
	binary.LittleEndian.PutUint32(rec[4:8], crc32.Checksum(rec[8:], castagnoli))
}

// AppendRecord appends a whole framed record of type t to dst.
func AppendRecord(dst []byte, t RecordType, payload []byte) []byte {
	dst, start := BeginRecord(dst, t)
	dst = append(dst, payload...)
	FinishRecord(dst, start)
	return dst
}

// damage says why a record could not be read.
type damage string

const (
	damageTorn     damage = "record cut off by the end of the segment"
	damageChecksum damage = "checksum mismatch"
	damageType     damage = "unknown record type"
	damageLength   damage = "record length out of range"
	damageHeader   damage = "missing or bad segment header"
	damageShort    damage = "segment shorter than its recorded length"
)

// frameLength returns the payload length stored in the framing at the start
// of b, which holds at least HeaderSize bytes.
func frameLength(b []byte) (int, damage) {
	_ = b[HeaderSize-1]
	n := binary.LittleEndian.Uint32(b[0:4])
	if n > MaxRecordSize {
		return 0, damageLength
	}
	return int(n), ""
}

// checksumOK verifies the CRC32C stored in hdr over the type byte and payload.
func checksumOK(hdr []byte, payload []byte) bool {
	c := crc32.Update(0, castagnoli, hdr[8:9])
	c = crc32.Update(c, castagnoli, payload)
	return c == binary.LittleEndian.Uint32(hdr[4:8])
}

package index

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

// Second bytes of the index rows, after schema.MetaIndexPrefix.
const (
	tagLog   = 'L' // 0x01 'L' ‖ seq (8 bytes): a change record
	tagTSUID = 'T' // 0x01 'T' ‖ TSUID: a series: its id and span
)

// Qualifiers of family x.
var (
	qualMax   = []byte("max") // counter row: highest series id reserved
	qualSeq   = []byte("seq") // counter row: highest log sequence reserved
	qualLow   = []byte("low") // counter row: log checkpoint
	qualID    = []byte("id")  // series row: 4-byte series id
	qualFirst = []byte("f")   // series row: first hour, version-stamped
	qualLast  = []byte("l")   // series row: last hour, version-stamped
	qualRec   = []byte("r")   // log row: the record
)

var famIndex = []string{schema.MetaFamilyIndex}

// Read options shared by every call: the contract never retains them.
var (
	readLow   = &storage.ReadOptions{Families: famIndex, Qualifiers: [][]byte{qualLow}}
	readID    = &storage.ReadOptions{Families: famIndex, Qualifiers: [][]byte{qualID}}
	readRec   = &storage.ReadOptions{Families: famIndex, Qualifiers: [][]byte{qualRec}}
	readIndex = storage.ReadOptions{Families: famIndex}
)

// hourLimit bounds hour numbers (hours since the epoch): base times are
// unsigned 32-bit seconds, so the largest hour is about 1.19 million.
const (
	hourLimit = 1 << 22
	maxHour   = math.MaxUint32 / 3600
)

// firstStamp and lastStamp are the cell timestamps (microseconds) of the
// first- and last-hour cells: the family keeps one version, the newest, so
// a lower first hour and a higher last hour always win, whatever order
// daemons write them in.
func firstStamp(h uint32) int64 { return (hourLimit - int64(h)) * 1000 }
func lastStamp(h uint32) int64  { return (int64(h) + 1) * 1000 }

func appendLogRow(dst []byte, seq uint64) []byte {
	dst = append(dst, schema.MetaIndexPrefix[0], tagLog)
	return binary.BigEndian.AppendUint64(dst, seq)
}

func appendTSUIDRow(dst, tsuid []byte) []byte {
	dst = append(dst, schema.MetaIndexPrefix[0], tagTSUID)
	return append(dst, tsuid...)
}

// rowRange returns [start, stop) of the rows of one tag.
func rowRange(tag byte) (start, stop []byte) {
	p := schema.MetaIndexPrefix[0]
	return []byte{p, tag}, []byte{p, tag + 1}
}

// parseTSUIDRow returns the TSUID of a series row; it aliases row.
func parseTSUIDRow(row []byte) ([]byte, error) {
	if len(row) < 3 || row[0] != schema.MetaIndexPrefix[0] || row[1] != tagTSUID {
		return nil, fmt.Errorf("series row %x: not 01 54 and a TSUID", row)
	}
	return row[2:], nil
}

func parseLogRow(row []byte) (uint64, error) {
	if len(row) != 10 || row[0] != schema.MetaIndexPrefix[0] || row[1] != tagLog {
		return 0, fmt.Errorf("log row %x: not 01 4c and an 8-byte sequence", row)
	}
	return binary.BigEndian.Uint64(row[2:]), nil
}

// hourCells are the cells recording sp in a series row; none when empty.
func hourCells(dst []storage.Cell, sp span) []storage.Cell {
	if sp.empty() {
		return dst
	}
	return append(dst,
		storage.Cell{Family: schema.MetaFamilyIndex, Qualifier: qualFirst, Timestamp: firstStamp(sp.first), Value: be32(sp.first)},
		storage.Cell{Family: schema.MetaFamilyIndex, Qualifier: qualLast, Timestamp: lastStamp(sp.last), Value: be32(sp.last)})
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

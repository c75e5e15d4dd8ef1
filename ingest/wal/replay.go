package wal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ReplayFunc receives every intact record of the log in order, except the
// segment headers. payload is valid only during the call. An error stops
// Open and is returned by it.
type ReplayFunc func(seg uint32, t RecordType, payload []byte) error

// ReplayStats describe what Open read and what it dropped.
type ReplayStats struct {
	// Segments is the number of segment files read.
	Segments int
	// Records and Bytes count the intact records delivered and their framed size.
	Records, Bytes int64
	// Damage is empty for a clean log, else why replay stopped early.
	Damage string
	// DamageSegment and DamageOffset locate the first damaged byte.
	DamageSegment uint32
	DamageOffset  int64
	// DroppedBytes counts the bytes after the damage, later segments included.
	DroppedBytes int64
	// DroppedSegments counts the later segments removed because of the damage.
	DroppedSegments int
}

// segmentEnd is what replaying one segment found.
type segmentEnd struct {
	valid int64  // bytes of intact records, header included
	size  int64  // file size
	dmg   damage // why reading stopped before size, if it did
}

// replayer reads segments for Open. It reuses one payload buffer.
type replayer struct {
	fs    vfs.FS
	dir   string
	fn    ReplayFunc
	buf   []byte
	stats ReplayStats
}

func (r *replayer) path(seg uint32) string { return r.fs.PathJoin(r.dir, SegmentName(seg)) }

// readHeader returns the previous segment's length recorded in seg's header,
// or -1 when the header is missing, damaged or does not know it.
func (r *replayer) readHeader(seg uint32) int64 {
	f, err := r.fs.Open(r.path(seg))
	if err != nil {
		return -1
	}
	defer f.Close()
	var b [HeaderSize + 32]byte
	n, _ := io.ReadFull(f, b[:])
	if n < HeaderSize {
		return -1
	}
	l, d := frameLength(b[:])
	if d != "" || HeaderSize+l > n || RecordType(b[8]) != TypeHeader || !checksumOK(b[:], b[HeaderSize:HeaderSize+l]) {
		return -1
	}
	s, prev, err := ParseHeader(b[HeaderSize : HeaderSize+l])
	if err != nil || s != seg {
		return -1
	}
	return prev
}

// replaySegment delivers the intact records of seg. When expected is not
// negative the next segment's header recorded seg's valid length, and
// reading stops there: bytes after it are a failed write, not damage.
func (r *replayer) replaySegment(seg uint32, expected int64) (segmentEnd, error) {
	f, err := r.fs.Open(r.path(seg), vfs.SequentialReadsOption)
	if err != nil {
		return segmentEnd{}, fmt.Errorf("wal: open segment %s: %w", SegmentName(seg), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return segmentEnd{}, fmt.Errorf("wal: stat segment %s: %w", SegmentName(seg), err)
	}
	r.stats.Segments++
	end := segmentEnd{size: fi.Size()}
	br := bufio.NewReaderSize(f, 256<<10)
	for {
		d, done, err := r.next(br, seg, &end, expected)
		if err != nil || done || d != "" {
			end.dmg = d
			return end, err
		}
	}
}

// next reads one record at end.valid. It reports damage, a clean end of the
// segment, or an error from the replay function or the file.
func (r *replayer) next(br *bufio.Reader, seg uint32, end *segmentEnd, expected int64) (damage, bool, error) {
	if end.valid == expected || (expected < 0 && end.valid == end.size) {
		return "", true, nil
	}
	var hdr [HeaderSize]byte
	if !fits(end, expected, HeaderSize) {
		return cut(end, expected), false, nil
	}
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return "", false, fmt.Errorf("wal: read segment %s: %w", SegmentName(seg), err)
	}
	n, d := frameLength(hdr[:])
	if d != "" {
		return d, false, nil
	}
	if !fits(end, expected, HeaderSize+int64(n)) {
		return cut(end, expected), false, nil
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n, max(n, 2*cap(r.buf)))
	}
	payload := r.buf[:n]
	if _, err := io.ReadFull(br, payload); err != nil {
		return "", false, fmt.Errorf("wal: read segment %s: %w", SegmentName(seg), err)
	}
	return r.deliver(seg, end, hdr[:], payload)
}

// fits reports whether n more bytes lie within the file and within the
// length the next segment recorded.
func fits(end *segmentEnd, expected, n int64) bool {
	e := end.valid + n
	return e <= end.size && (expected < 0 || e <= expected)
}

// cut names the damage of a record cut off by the end of the file, or by
// the length the next segment recorded.
func cut(end *segmentEnd, expected int64) damage {
	if expected > end.size {
		return damageShort
	}
	return damageTorn
}

// deliver checks a read record and hands it to the replay function.
func (r *replayer) deliver(seg uint32, end *segmentEnd, hdr, payload []byte) (damage, bool, error) {
	if !checksumOK(hdr, payload) {
		return damageChecksum, false, nil
	}
	t := RecordType(hdr[8])
	if !t.Known() {
		return damageType, false, nil
	}
	if (end.valid == 0) != (t == TypeHeader) {
		return damageHeader, false, nil
	}
	if t == TypeHeader {
		if s, _, err := ParseHeader(payload); err != nil || s != seg {
			return damageHeader, false, nil
		}
	} else if err := r.fn(seg, t, payload); err != nil {
		return "", false, fmt.Errorf("wal: replay segment %s offset %d: %w", SegmentName(seg), end.valid, err)
	}
	size := int64(HeaderSize + len(payload))
	end.valid += size
	r.stats.Records++
	r.stats.Bytes += size
	return "", false, nil
}

// replayAll replays segs in order and stops at the first damage. It returns
// the segments that remain valid (a prefix of segs) and the valid length of
// the last one.
func (r *replayer) replayAll(segs []uint32) (kept []uint32, lastValid int64, err error) {
	for i, seg := range segs {
		expected := int64(-1)
		if i+1 < len(segs) && segs[i+1] == seg+1 {
			expected = r.readHeader(seg + 1)
		}
		end, err := r.replaySegment(seg, expected)
		if err != nil {
			return nil, 0, err
		}
		if end.dmg != "" {
			r.noteDamage(seg, end, segs[i+1:])
			return segs[:i+1], end.valid, nil
		}
		lastValid = end.valid
	}
	return segs, lastValid, nil
}

// noteDamage records where replay stopped and what it dropped.
func (r *replayer) noteDamage(seg uint32, end segmentEnd, later []uint32) {
	r.stats.Damage = string(end.dmg)
	r.stats.DamageSegment = seg
	r.stats.DamageOffset = end.valid
	r.stats.DroppedBytes = max(end.size-end.valid, 0)
	r.stats.DroppedSegments = len(later)
	for _, s := range later {
		if fi, err := r.fs.Stat(r.path(s)); err == nil {
			r.stats.DroppedBytes += fi.Size()
		}
	}
}

// removeSegments deletes segment files that replay dropped.
func removeSegments(fs vfs.FS, dir string, segs []uint32) error {
	for _, s := range segs {
		if err := fs.Remove(fs.PathJoin(dir, SegmentName(s))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wal: remove segment %s: %w", SegmentName(s), err)
		}
	}
	return nil
}

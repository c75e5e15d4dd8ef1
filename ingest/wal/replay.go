package wal

import (
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ReplayFunc receives every intact record of the log in order, except the
// segment headers. payload is valid only during the call. An error stops
// Open and is returned by it.
type ReplayFunc func(seg uint32, t RecordType, payload []byte) error

// ReplayStats describe what Open read and what it skipped.
type ReplayStats struct {
	// Segments is the number of segment files read.
	Segments int
	// Records and Bytes count the intact records delivered and their framed size.
	Records, Bytes int64
	// CorruptRecords counts the damaged places replay skipped, each one
	// record, or one run of bytes whose framing is damaged (see Damage).
	// Interrupted writes at the end of the newest segment are not counted.
	CorruptRecords int64
	// CorruptBytes counts the bytes of those places.
	CorruptBytes int64
	// TornBytes counts the bytes of an interrupted write dropped from the end
	// of the newest segment.
	TornBytes int64
	// Damaged lists the damaged places in log order, torn tails included;
	// only the first MaxDamageListed are kept.
	Damaged []Damage
}

// MaxDamageListed bounds ReplayStats.Damaged, and the log lines of a replay.
const MaxDamageListed = 64

// Damage is one damaged place that replay skipped: a record whose
// checksum, type or placement is wrong (Length is its framed size), or, where
// the framing itself is damaged, every byte up to the next intact record or
// the end of the segment.
type Damage struct {
	Segment uint32
	// Offset is the first skipped byte, Length the number skipped.
	Offset, Length int64
	// Reason says why the first skipped record could not be read.
	Reason string
	// Torn marks an interrupted write at the end of the newest segment: a
	// record cut off by the end of the file, or a run of zeros there.
	Torn bool
}

// replayer reads segments for Open. It reuses one window buffer.
type replayer struct {
	fs    vfs.FS
	dir   string
	fn    ReplayFunc
	buf   []byte
	probe []byte
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
	fi, err := f.Stat()
	if err != nil {
		return -1
	}
	s := &segReader{f: f, limit: fi.Size()}
	n, d, err := s.check(0)
	if err != nil || d != "" {
		return -1
	}
	rec, err := s.at(0, int(n))
	if err != nil || RecordType(rec[8]) != TypeHeader {
		return -1
	}
	got, prev, err := ParseHeader(rec[HeaderSize:])
	if err != nil || got != seg {
		return -1
	}
	return prev
}

// replaySegment delivers the intact records of seg and skips its damaged
// places. When expected is not negative the next segment's header recorded
// seg's valid length, and reading stops there: bytes after it are a failed
// write, not damage. newest says no segment follows. It returns the end of
// the last intact record, the valid length the next segment records.
func (r *replayer) replaySegment(seg uint32, expected int64, newest bool) (int64, error) {
	f, err := r.fs.Open(r.path(seg), vfs.SequentialReadsOption)
	if err != nil {
		return 0, fmt.Errorf("wal: open segment %s: %w", SegmentName(seg), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("wal: stat segment %s: %w", SegmentName(seg), err)
	}
	r.stats.Segments++
	s := &segReader{f: f, limit: fi.Size(), buf: r.buf, probe: r.probe}
	if expected >= 0 {
		s.limit = min(expected, s.limit)
	}
	defer func() { r.buf, r.probe = s.buf[:0], s.probe[:0] }()
	valid, err := r.readRecords(seg, s, newest)
	if err != nil {
		return 0, err
	}
	if expected > fi.Size() {
		r.noteShort(seg, fi.Size(), expected)
	}
	return valid, nil
}

// readRecords walks s from its start to its limit, delivering intact records
// and skipping damaged places.
func (r *replayer) readRecords(seg uint32, s *segReader, newest bool) (valid int64, err error) {
	var off int64
	for off < s.limit {
		n, d, err := s.check(off)
		if err != nil {
			return 0, fmt.Errorf("wal: read segment %s: %w", SegmentName(seg), err)
		}
		if d == "" {
			d, err = r.deliver(seg, s, off, n)
			if err != nil {
				return 0, err
			}
		}
		if d == "" {
			off += n
			valid = off
			continue
		}
		next, err := r.skip(seg, s, off, n, d, newest)
		if err != nil {
			return 0, fmt.Errorf("wal: read segment %s: %w", SegmentName(seg), err)
		}
		off = next
	}
	return valid, nil
}

// deliver hands the intact record of n framed bytes at off to the replay
// function, unless it is a header out of place, or a bad one.
func (r *replayer) deliver(seg uint32, s *segReader, off, n int64) (damage, error) {
	rec, err := s.at(off, int(n))
	if err != nil {
		return "", fmt.Errorf("wal: read segment %s: %w", SegmentName(seg), err)
	}
	t, payload := RecordType(rec[8]), rec[HeaderSize:]
	switch {
	case off == 0 && t != TypeHeader:
		r.note(Damage{Segment: seg, Reason: string(damageHeader)})
	case t == TypeHeader && off != 0:
		return damageHeader, nil
	case t == TypeHeader:
		if got, _, err := ParseHeader(payload); err != nil || got != seg {
			return damageHeader, nil
		}
	}
	if t != TypeHeader {
		if err := r.fn(seg, t, payload); err != nil {
			return "", fmt.Errorf("wal: replay segment %s offset %d: %w", SegmentName(seg), off, err)
		}
	}
	r.stats.Records++
	r.stats.Bytes += n
	return "", nil
}

// skip records the damaged place at off, framed as n bytes when its
// framing holds (n > 0), and returns where reading resumes.
func (r *replayer) skip(seg uint32, s *segReader, off, n int64, d damage, newest bool) (int64, error) {
	next := off + n
	if n == 0 {
		var err error
		if next, err = s.resync(off); err != nil {
			return 0, err
		}
	}
	dm := Damage{Segment: seg, Offset: off, Length: next - off, Reason: string(d)}
	if newest && next == s.limit && (d == damageTorn || s.zeros(off)) {
		dm.Torn = true
	}
	r.note(dm)
	return next, nil
}

// noteShort records a segment that ends before the length the next one
// recorded, extending the damage at its end if there is one.
func (r *replayer) noteShort(seg uint32, size, expected int64) {
	if l := len(r.stats.Damaged); l > 0 {
		last := &r.stats.Damaged[l-1]
		if last.Segment == seg && last.Offset+last.Length == size {
			last.Length = expected - last.Offset
			last.Reason = string(damageShort)
			r.stats.CorruptBytes += expected - size
			return
		}
	}
	r.note(Damage{Segment: seg, Offset: size, Length: expected - size, Reason: string(damageShort)})
}

// note counts a damaged place and lists it while the list has room.
func (r *replayer) note(d Damage) {
	if d.Torn {
		r.stats.TornBytes += d.Length
	} else {
		r.stats.CorruptRecords++
		r.stats.CorruptBytes += d.Length
	}
	if len(r.stats.Damaged) < MaxDamageListed {
		r.stats.Damaged = append(r.stats.Damaged, d)
	}
}

// replayAll replays segs in order, each to its end whatever damage it
// holds, and returns the valid length of the last one.
func (r *replayer) replayAll(segs []uint32) (lastValid int64, err error) {
	for i, seg := range segs {
		expected := int64(-1)
		if i+1 < len(segs) && segs[i+1] == seg+1 {
			expected = r.readHeader(seg + 1)
		}
		if lastValid, err = r.replaySegment(seg, expected, i+1 == len(segs)); err != nil {
			return 0, err
		}
	}
	return lastValid, nil
}

// removeSegments deletes segment files.
func removeSegments(fs vfs.FS, dir string, segs []uint32) error {
	for _, s := range segs {
		if err := fs.Remove(fs.PathJoin(dir, SegmentName(s))); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wal: remove segment %s: %w", SegmentName(s), err)
		}
	}
	return nil
}

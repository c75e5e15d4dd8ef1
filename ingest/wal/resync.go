package wal

import "github.com/cockroachdb/pebble/v2/vfs"

// readWindow is how much of a segment replay reads at a time.
const readWindow = 256 << 10

// segReader reads a segment through a window that moves forward with
// replay, and answers the resynchronisation's probes beside it, so that
// stepping over damage neither rereads the window nor holds the whole file.
type segReader struct {
	f vfs.File
	// limit is how far replay reads: the file size, or less when the next
	// segment recorded this one's valid length.
	limit int64
	buf   []byte // the window
	start int64  // file offset of buf[0]
	probe []byte // scratch of probes
}

// at returns the n bytes at off, which must lie below limit. The slice is
// valid until the next call.
func (s *segReader) at(off int64, n int) ([]byte, error) {
	if off >= s.start && off+int64(n) <= s.start+int64(len(s.buf)) {
		return s.buf[off-s.start:][:n], nil
	}
	size := int(min(int64(max(n, readWindow)), s.limit-off))
	if cap(s.buf) < size {
		s.buf = make([]byte, size)
	}
	s.buf = s.buf[:size]
	if err := s.read(s.buf, off); err != nil {
		s.buf = s.buf[:0]
		return nil, err
	}
	s.start = off
	return s.buf[:n], nil
}

// read reads len(dst) bytes at off into dst without moving the window. A
// read that ends at the end of the file may say io.EOF: not an error here.
func (s *segReader) read(dst []byte, off int64) error {
	n, err := s.f.ReadAt(dst, off)
	if n == len(dst) {
		return nil
	}
	return err
}

// check reads the framing at off: it returns the framed size of an intact
// record there (length within bounds and the file, known type, checksum
// over type and payload right), or why there is none.
func (s *segReader) check(off int64) (int64, damage, error) {
	if off+HeaderSize > s.limit {
		return 0, damageTorn, nil
	}
	h, err := s.at(off, HeaderSize)
	if err != nil {
		return 0, "", err
	}
	var hdr [HeaderSize]byte
	copy(hdr[:], h)
	n, d := frameLength(hdr[:])
	switch {
	case d != "":
		return 0, d, nil
	case off+HeaderSize+int64(n) > s.limit:
		return 0, damageTorn, nil
	}
	payload, err := s.at(off+HeaderSize, n)
	if err != nil {
		return 0, "", err
	}
	if !checksumOK(hdr[:], payload) {
		return 0, damageChecksum, nil
	}
	if !RecordType(hdr[8]).Known() {
		return 0, damageType, nil
	}
	return HeaderSize + int64(n), "", nil
}

// resync returns where the next intact record after the damaged one at off
// starts, or limit when none does. It steps forward a byte at a time,
// looking for a record whose checksum holds and that ends at limit or where
// another plausible frame starts. The end the damaged record's own length
// claims is held to the first test only: that length may be the damaged
// byte, and a wrong length lands on a real record boundary often enough.
func (s *segReader) resync(off int64) (int64, error) {
	claimed := int64(-1)
	if off+HeaderSize <= s.limit {
		var hdr [HeaderSize]byte
		if err := s.read(hdr[:], off); err != nil {
			return 0, err
		}
		if n, d := frameLength(hdr[:]); d == "" {
			claimed = off + HeaderSize + int64(n)
		}
	}
	for y := off + 1; y < s.limit; y++ {
		ok, err := s.recordAt(y, y != claimed)
		if err != nil || ok {
			return y, err
		}
	}
	return s.limit, nil
}

// recordAt reports whether an intact record that is not a segment header
// starts at off. strict also asks that it end at limit or at a plausible
// frame: a cheap test that spares most candidates of a byte-wise scan the
// checksum over their claimed length.
func (s *segReader) recordAt(off int64, strict bool) (bool, error) {
	n, ok, err := s.frameAt(off, strict)
	if err != nil || !ok {
		return false, err
	}
	end := off + HeaderSize + n
	if strict && end != s.limit {
		if _, ok, err := s.frameAt(end, false); err != nil || !ok {
			return false, err
		}
	}
	var hdr [HeaderSize]byte
	if err := s.read(hdr[:], off); err != nil {
		return false, err
	}
	if cap(s.probe) < int(n) {
		s.probe = make([]byte, n)
	}
	payload := s.probe[:n]
	if err := s.read(payload, off+HeaderSize); err != nil {
		return false, err
	}
	return checksumOK(hdr[:], payload), nil
}

// frameAt reads the framing at off and reports whether it could start a
// record other than a header: a known type and a length that fits. A scan
// reads it through the window, which it moves along; probes elsewhere read
// beside the window.
func (s *segReader) frameAt(off int64, scan bool) (int64, bool, error) {
	if off+HeaderSize > s.limit {
		return 0, false, nil
	}
	var hdr [HeaderSize]byte
	if scan {
		h, err := s.at(off, HeaderSize)
		if err != nil {
			return 0, false, err
		}
		copy(hdr[:], h)
	} else if err := s.read(hdr[:], off); err != nil {
		return 0, false, err
	}
	t := RecordType(hdr[8])
	n, d := frameLength(hdr[:])
	if t == TypeHeader || !t.Known() || d != "" || off+HeaderSize+int64(n) > s.limit {
		return 0, false, nil
	}
	return int64(n), true, nil
}

// zeros reports whether every byte from off to limit is zero, as the tail a
// file system leaves when it extended a file but lost the data written.
func (s *segReader) zeros(off int64) bool {
	for off < s.limit {
		n := int(min(readWindow, s.limit-off))
		b, err := s.at(off, n)
		if err != nil {
			return false
		}
		for _, c := range b {
			if c != 0 {
				return false
			}
		}
		off += int64(n)
	}
	return true
}

package wal

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

const (
	segmentSuffix = ".wal"
	lockName      = "LOCK"
	// writeCategory tags the log's writes in pebble's disk statistics.
	writeCategory vfs.DiskWriteCategory = "tsd-wal"
)

// SegmentName returns the file name of segment index seg.
func SegmentName(seg uint32) string { return fmt.Sprintf("%010d%s", seg, segmentSuffix) }

// parseSegmentName returns the index of a segment file name.
func parseSegmentName(name string) (uint32, bool) {
	digits, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(digits) == 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 32)
	return uint32(n), err == nil && n > 0
}

// listSegments returns the segment indexes in dir, ascending.
func listSegments(fs vfs.FS, dir string) ([]uint32, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("wal: list %s: %w", dir, err)
	}
	var segs []uint32
	for _, name := range names {
		if seg, ok := parseSegmentName(name); ok {
			segs = append(segs, seg)
		}
	}
	slices.Sort(segs)
	return segs, nil
}

package wal

import (
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkReplay opens a log of 64 MiB of 200-byte records (four
// segments) on a MemFS: the cost of replay's reading and checking.
func BenchmarkReplay(b *testing.B) {
	fs := vfs.NewMem()
	opts := &Options{SegmentSize: 16 << 20, FsyncInterval: -1, Logger: slog.New(slog.DiscardHandler)}
	l, err := Open(fs, "wal", opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	rec := AppendRecord(nil, TypeSamples, make([]byte, 200-HeaderSize))
	batch := make([]byte, 0, 64<<10)
	for len(batch)+len(rec) <= cap(batch) {
		batch = append(batch, rec...)
	}
	for n := 0; n < 64<<20; n += len(batch) {
		for {
			err := l.Append(batch, l.Segment(), false)
			if err != ErrSegmentChanged {
				if err != nil {
					b.Fatal(err)
				}
				break
			}
		}
	}
	l.Close()
	b.SetBytes(64 << 20)
	b.ReportAllocs()
	for b.Loop() {
		l, err := Open(fs, "wal", opts, func(uint32, RecordType, []byte) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		l.Close()
		// Keep the log as written: drop the segment this open started.
		segs, _ := listSegments(fs, "wal")
		removeSegments(fs, "wal", segs[len(segs)-1:])
		b.StartTimer()
	}
}

package wal

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestDeleteRoundTrip(t *testing.T) {
	b := AppendDeleteRange(nil, -5, 1356998400000)
	b = AppendDeleteKey(b, []byte{0, 0, 1, 0, 0, 1, 0, 0, 2})
	b = AppendDeleteKey(b, []byte{9})
	// Byte format: zigzag varints (-5 is 9; 1356998400000 takes 6
	// bytes), then length-prefixed keys.
	keys := []byte{9, 0, 0, 1, 0, 0, 1, 0, 0, 2, 1, 9}
	if len(b) != 1+6+len(keys) || b[0] != 9 || !bytes.Equal(b[7:], keys) {
		t.Fatalf("payload % x", b)
	}
	var d DeleteDecoder
	d.Reset(b)
	if mint, maxt := d.Range(); mint != -5 || maxt != 1356998400000 {
		t.Fatalf("range %d..%d", mint, maxt)
	}
	var got [][]byte
	for k, ok := d.Next(); ok; k, ok = d.Next() {
		got = append(got, k)
	}
	if d.Err() != nil || len(got) != 2 || !bytes.Equal(got[1], []byte{9}) {
		t.Fatalf("keys %x err %v", got, d.Err())
	}
	d.Reset(b[:len(b)-1])
	for _, ok := d.Next(); ok; _, ok = d.Next() {
	}
	if !errors.Is(d.Err(), ErrCorruptRecord) {
		t.Fatalf("cut payload: err %v", d.Err())
	}
	d.Reset(nil)
	if !errors.Is(d.Err(), ErrCorruptRecord) {
		t.Fatalf("empty payload: err %v", d.Err())
	}
}

// TestDeleteRecordReplays checks that a log holding a delete record opens
// cleanly and hands the record to the replay function, in order.
func TestDeleteRecordReplays(t *testing.T) {
	fs := vfs.NewMem()
	l, _ := mustOpen(t, fs, quietOpts(1<<20))
	rec := AppendRecord(nil, TypeDelete, AppendDeleteKey(AppendDeleteRange(nil, 1, 2), []byte{7}))
	if err := l.Append(rec, l.Segment(), true); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var types []RecordType
	l2, err := Open(fs, "wal", quietOpts(1<<20), func(_ uint32, rt RecordType, _ []byte) error {
		types = append(types, rt)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if len(types) != 1 || types[0] != TypeDelete || len(l2.ReplayStats().Damaged) != 0 {
		t.Fatalf("replayed %v, stats %+v", types, l2.ReplayStats())
	}
}

func FuzzDelete(f *testing.F) {
	f.Add(AppendDeleteKey(AppendDeleteRange(nil, 0, 3600000), []byte{1, 2, 3}))
	f.Add([]byte{2, 4, 200, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d DeleteDecoder
		d.Reset(b)
		mint, maxt := d.Range()
		re := AppendDeleteRange(nil, mint, maxt)
		for k, ok := d.Next(); ok; k, ok = d.Next() {
			re = AppendDeleteKey(re, k)
		}
		if d.Err() == nil && len(re) > len(b) {
			t.Fatalf("re-encoding grew: %d > %d", len(re), len(b))
		}
	})
}

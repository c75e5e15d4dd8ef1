package pebble

import (
	"context"
	"testing"

	"github.com/tsd-db/tsd/storage"
)

// TestOneRowScanBounds checks the one-row scan [row, row‖0x00), whose
// bound the scanner tightens to the row prefix's successor: neighbours
// row‖0x00, row‖0xFF and a longer row sharing the prefix stay out, and a
// version-limited family still returns only the newest version.
func TestOneRowScanBounds(t *testing.T) {
	ctx := context.Background()
	db := openInternal(t, t.TempDir(), &Options{GCInterval: -1})
	tb := ensure(t, db, storage.TableSpec{Name: "x", Families: []storage.FamilySpec{{Name: "t", MaxVersions: 1}}})
	rows := [][]byte{{0x00}, {0x00, 0x00}, {0x00, 0xFF}, {0x00, 0x00, 0x01}, {0xFF}, {0xFF, 0x00}}
	for i, r := range rows {
		for ts := int64(1000); ts <= 3000; ts += 1000 {
			c := storage.Cell{Family: "t", Qualifier: []byte{0xFE, byte(i)}, Timestamp: ts, Value: []byte{byte(i), byte(ts / 1000)}}
			if err := tb.Put(ctx, r, []storage.Cell{c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, r := range rows {
		stop := append(append([]byte(nil), r...), 0)
		sc := tb.Scan(ctx, &storage.ScanOptions{Start: r, Stop: stop})
		var got []storage.Cell
		for sc.Next() {
			for _, c := range sc.Row().Cells {
				got = append(got, storage.Cell{Row: append([]byte(nil), c.Row...), Value: append([]byte(nil), c.Value...)})
			}
		}
		if err := sc.Close(); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || string(got[0].Row) != string(r) || got[0].Value[0] != byte(i) || got[0].Value[1] != 3 {
			t.Fatalf("row %x: got %v", r, got)
		}
	}
}

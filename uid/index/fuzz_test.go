package index

import (
	"bytes"
	"testing"
)

// FuzzParseRecord: no panic on arbitrary bytes, and a parsed record
// re-encodes to the same bytes.
func FuzzParseRecord(f *testing.F) {
	f.Add(appendNewRecord(nil, []item{{id: 1, sp: span{2, 3}, tsuid: []byte{0, 0, 1, 0, 0, 1, 0, 0, 2}}}))
	f.Add(appendNewRecord(nil, []item{{id: 7, sp: noSpan, tsuid: []byte{0, 0, 1}}, {id: 8, sp: span{0, 0}}}))
	f.Add(appendHoursRecord(nil, []item{{id: 1, sp: span{5, 9}}, {id: 2, sp: span{1, 1}}}))
	f.Add(appendVoidRecord(nil, 77))
	f.Add([]byte{recNew, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := parseRecord(b, nil)
		if err != nil {
			return
		}
		var again []byte
		switch rec.kind {
		case recNew:
			again = appendNewRecord(nil, rec.items)
		case recHours:
			again = appendHoursRecord(nil, rec.items)
		case recVoid:
			again = appendVoidRecord(nil, rec.voidLast)
		default:
			t.Fatalf("parsed kind %#x", rec.kind)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip %x → %x", b, again)
		}
	})
}

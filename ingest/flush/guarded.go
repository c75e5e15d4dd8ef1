package flush

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// The small state files WRITERID and FLUSHSEQ hold their value twice,
// each copy followed by its CRC-32C. One damaged byte then leaves one copy
// that checks out, where a single copy without a checksum could turn into
// another valid value unseen: one flipped hex digit of a writer id makes
// another id, and a lowered flush number bound makes flush numbers repeat.
// Two copies that both check out but differ cannot come from one damaged
// byte, and are refused as neither can be trusted.

// errGuardDamaged says no copy of a guarded value checks out, or two
// that do disagree.
var errGuardDamaged = errors.New("damaged: no copy checks out")

// guardSum is the checksum kept beside each copy of a 4-byte value.
func guardSum(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return crc32.Checksum(b[:], crcTable)
}

// pickGuarded returns the value of the copies that check out (ok[i] with
// vals[i]) and whether one of them did not, so the caller rewrites the
// file.
func pickGuarded(vals []uint32, ok []bool) (v uint32, damaged bool, err error) {
	found := false
	for i := range vals {
		switch {
		case !ok[i]:
			damaged = true
		case !found:
			v, found = vals[i], true
		case vals[i] != v:
			return 0, true, errGuardDamaged
		}
	}
	if !found {
		return 0, true, errGuardDamaged
	}
	return v, damaged, nil
}

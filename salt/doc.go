// Package salt computes OpenTSDB 2.2+'s row-key salt: a bucket number
// prefixed to every data row key so that one metric's rows spread over
// several key ranges (Bigtable tablets, parallel scans on the embedded
// engine).
//
// # Byte format
//
// The salt is Width bytes (0..8) at the very front of a row key. For a row
// key [salt][metric UID][base time 4B][tagk tagv]..., the hashed bytes are the
// metric UID followed by all tag bytes (the row key without the salt and
// without the 4 timestamp bytes), so a series keeps one bucket forever:
//
//	h = 1; for each byte b: h = 31*h + int32(int8(b))   (Java Arrays.hashCode, int32 wrap-around)
//	m = h % Buckets                                     (Java remainder: sign of the dividend)
//	if m < 0 { m = -m }
//
// m is written big-endian into the Width bytes the way OpenTSDB's
// RowKey.getSaltBytes does: byte Width-1-i holds m >>> (8*i), with Java's
// int shift masking the distance to 5 bits. So widths 1..4 are plain
// big-endian and widths 5..8 repeat m in their low four bytes (width 8,
// bucket 20: 00000014 00000014).
//
// OpenTSDB's global annotation row, whose metric UID is all zero bytes, is
// never salted: its salt bytes stay zero.
//
// # Defaults and invariants
//
// tsd defaults to Width 1 and Buckets 20 (Default). OpenTSDB itself defaults
// to width 0 (no salt), and many existing OpenTSDB tables use width 0: a
// table keeps the width and bucket count it was created with, recorded in
// the meta table, because changing either moves every series to another
// key.
//
// Worked example (docs/formats.md, Row keys): metric 000001, tags 000001
// 000001 hash to 691019968; 691019968 % 20 = 8, so the salt is 08.
//
// The package is pure: no I/O, no allocation.
package salt

// Package rowkey is the byte format of tsd's data table: row keys, TSUIDs,
// OpenTSDB 2.4's column qualifiers, values, compacted and appends columns,
// annotation qualifiers, and tsd's own dense column. It is pure encoding:
// no I/O, append-style codecs (AppendX(dst, ...) and ParseX), and no
// allocation per point once a reused encoder or decoder has warmed up.
// Timestamps are int64 milliseconds since the epoch; a row's base time is
// in seconds, as in the key.
//
// # Row key
//
//	[salt: Salt.Width() bytes][metric UID][base time: 4 bytes][tagk UID tagv UID]...
//
// UID widths come from Layout.Widths (default 3 bytes each). The base time
// is the point's seconds minus seconds mod 3600, unsigned big-endian
// (timestamps up to MaxTimestamp, the year 2106). Tag pairs are sorted by
// the bytes of tagk then tagv, which is OpenTSDB's memcmp of the
// concatenated UIDs, so effectively by tag key UID; a tag key appears once.
// A series may have zero tags and at most Layout.MaxTags (default 32,
// OpenTSDB's default is 8). The salt (package salt) hashes the metric UID
// and the tag bytes, so a series keeps its bucket; the all-zero metric row
// (OpenTSDB's global annotations) keeps zero salt bytes. ParseRowKey checks
// the length, the tag order, a whole-hour base and the salt.
//
// A TSUID is the key without salt and base time: metric UID then the tag
// pairs, shown as uppercase hex in the HTTP API (AppendTSUIDHex).
//
// Within a salt bucket a metric's rows sort by hour, so its rows over a
// time span are one contiguous key range per bucket (Buckets of them),
// which BucketRange gives: from [bucket][metric][first hour] to
// [bucket][metric][the hour after the last].
//
// Example (docs/formats.md, Row keys): sys.cpu.user=000001, host=000001,
// web01=000001 at 1356998400 is 000001 50E22700 000001 000001, and
// 08 000001 50E22700 000001 000001 with salt width 1 and 20 buckets.
//
// # OpenTSDB data columns (family t)
//
// A point's qualifier is either 2 bytes, uint16(delta_s<<4 | flags) with
// delta_s in 0..3599, or 4 bytes, uint32(0xF0000000 | delta_ms<<6 |
// flags) with delta_ms in 0..3599999 and bits 5..4 zero; a qualifier is the
// millisecond form iff its first byte has the F0 nibble. Flags: 0x8 float,
// low 3 bits value length - 1. Integers take the fewest of 1, 2, 4, 8
// bytes (two's complement, big-endian); Float32 points 4 bytes (0xB) and
// Float64 points 8 (0xF). Which of a float's widths a text value gets
// (float32 when exact) is the parsers' choice; this package keeps the
// point's Kind. NewQualifier uses the second form for whole-second offsets.
//
// Reading a single 2-byte-qualifier cell applies OpenTSDB's two repairs
// (FixSingle): a float flagged 4 bytes but stored on 8 keeps its last 4
// when the first 4 are zero (else "Corrupted floating point value"), then
// the length bits are rewritten from the value's real length (0003 with an
// 8-byte value reads as 0007). Millisecond cells are read as they are.
//
// A compacted column concatenates the qualifiers of its points in time
// order and their values in the same order, plus one meta byte when it
// holds two or more points: 0x01 if second and millisecond qualifiers mix,
// else 0x00 (CompactedWriter, AppendCompacted). Parsing walks the
// qualifiers and must consume exactly len(value)-1 value bytes, else
// "Corrupted value: couldn't break down into individual values".
//
// The appends column has qualifier 05 00 00; its value is (qualifier ‖
// value) pairs in any order, duplicates allowed, no meta byte; on read the
// last of duplicate offsets wins (ParseAppends).
//
// Annotation qualifiers are 01 + 2-byte seconds offset (whole seconds) or
// 01 + 4-byte milliseconds offset, no flags; histogram points use 06 the
// same way. Even qualifier lengths are data points to OpenTSDB; odd ones
// are not, which is what lets the dense column share a row with it.
//
// # Dense column
//
// tsd's compacted column, the default format of new tables. Qualifier
// (9 bytes, odd, so OpenTSDB 2.4 readers skip it):
//
//	80 | writer id (4 bytes BE) | flush sequence number (4 bytes BE)
//
// 0x80 is format version 1; 0x81..0xEF are reserved for later versions
// (no OpenTSDB column, rollup aggregator id or ASCII prefix starts there)
// and a reader refuses them as corrupt rather than guess. Writer ids are
// distinct per writer and a writer never reuses a sequence number, so two
// flushes never share a qualifier.
//
// The value holds 1..MaxDensePoints points of one row, strictly
// increasing in time, each keeping its Kind and exact bits. Layout:
//
//	h0          1 byte: bits 0-2 class (0 int, 1 dec32, 2 dec64, 3 raw64,
//	            4 raw32, 7 mixed), bit 3 second-order values, bit 4
//	            regular times, bit 5 the coder's state starts at 1 (clear
//	            in cells written before it: their state starts at 2^23),
//	            bits 6-7 zero
//	n           uvarint, the number of points
//	t0          uvarint, first point's offset from the row base in ms
//	d1          uvarint, t1 - t0 (when n >= 2)
//	TS stream   descriptor, when not regular
//	CLS stream  descriptor, then uvarint nk (chain points), when mixed
//	d           1 byte, decimal exponent 0..15, when class is dec32, dec64
//	            or mixed
//	k0          uvarint zigzag, first chain value (when nk >= 1)
//	kd0         uvarint zigzag, k1 - k0 (second order and nk >= 2)
//	VAL stream  descriptor (when nk >= 2, or >= 3 for second order)
//	raw0        8 bytes BE, first raw value (when n - nk >= 1)
//	LZ, SIG     two descriptors (when n - nk >= 2)
//	rANS        the rest: the entropy-coded tokens (empty if none)
//
// Classes. Every point is either in the integer chain or in the raw
// chain. Int points are their int64 k (times 10^d in a mixed cell).
// A Float64 point is dec64 when some d <= 15 and integer k make
// float64(k)/10^d bit-identical to it: the decoder computes exactly that
// division, so a value parsed from "42.07" (the nearest double to 4207/100)
// comes back with its exact bits. Float32 points likewise (dec32) with
// float32(k)/float32(10^d). The encoder finds each float's smallest d,
// uses the largest over the cell, rescales the others (exactly, while k
// stays below 2^53 or 2^24; otherwise it re-checks) and demotes any float
// that does not fit to raw, so a stale marker (0x7ff0000000000002), a NaN
// payload or -0 costs one raw point and not the row. Everything else is
// raw64 (the float64 bits) or raw32 (the float32 bits).
//
// Tokens, in decoding order, per point i: the time delta-of-delta
// (i >= 2, not regular), the class symbol (mixed), then for a chain point
// j (j >= 1, or >= 2 in second order) its delta (or delta of delta), or for
// a raw point r >= 1 the XOR with the previous raw value: symbol 0 when
// equal, else 1+leading zeros (LZ), then significant bits - 1 (SIG), then
// the significant bits below the leading one, raw. Deltas are zigzagged
// and bucketed by internal/encoding/entropy: one symbol (exact below 8,
// else bit length and two more bits) plus raw low bits.
//
// A stream descriptor is 00 s (constant symbol s: no tokens), 02 id (one
// of 256 built-in models: Gaussian, Laplace and two spike-at-zero Laplace
// families at 64 scales each) or 01 table (first and last symbol, then
// uvarint frequencies summing to 1024). The encoder prices each choice
// exactly and keeps the cheapest, and picks first or second order values
// the same way (counters prefer the second).
//
// The tokens are one rANS stream (entropy.Encoder): the final state as 4
// bytes, then the renormalisation bytes. A reader must end with every byte
// consumed and the state back at its start (1 with bit 5, else 2^23,
// entropy.Decoder.InitLegacy); otherwise the cell is corrupt.
//
// Why this coder: the bench devops rows hold 360 points whose integer
// steps have about 2.1 bits of entropy (0.26 bytes per point); a row
// cannot pay for a transmitted table of its distribution, and an adaptive
// coder spends much of a row learning and decodes bit by bit. A built-in
// model costs one byte and fits Gaussian and Laplace steps within a few
// percent, and rANS decodes a symbol with one table lookup and a multiply,
// so the same format is both smaller than Prometheus's XOR chunks and
// faster to decode. Block compression (klauspost/compress) is not used:
// after entropy coding a row has nothing left for LZ or Huffman to find.
// Measured on the devops day (dense_timing_test.go): about 0.30 bytes per
// point in int mode and about 0.16x XOR's bytes in float mode.
//
// # Reading a row
//
// RowDecoder takes the cells of one row (qualifier, value, cell
// timestamp) in any mix of formats and yields its points sorted by time,
// one per timestamp. On a duplicate timestamp the point from the column
// with the newer cell timestamp wins; ties go to the higher writer id
// (OpenTSDB columns count as writer 0), then the higher flush number, then
// the greater qualifier. A cell that does not decode is reported as a
// *CellError naming its qualifier and left out; the rest of the row still
// decodes. DenseIter streams one dense column as a series.Iterator.
//
// # Slices
//
// Parsed keys, qualifiers and values alias the bytes they were parsed
// from; copy them to keep them past the caller's buffer. Encoders append
// to dst and never retain it.
package rowkey

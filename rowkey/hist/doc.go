// Package hist is OpenTSDB 2.4's histogram points as pure codecs: the
// cells a histogram is stored in, the simple bucketed histogram's bytes
// (SimpleHistogramDecoder), the codec table that maps the first byte of a
// stored value to its codec (tsd.core.histograms.config), the telnet
// bucket form, and the arithmetic queries need (bucket-wise sums and
// OpenTSDB's percentile estimate). It does no I/O.
//
// # Cells
//
// A histogram point is one column of its series' hour row in the data
// table, never merged with others:
//
//	qualifier  06 + 2-byte offset in seconds           (a timestamp given in seconds)
//	           06 + 4-byte offset in milliseconds      (a timestamp given in milliseconds)
//	value      codec id (1 byte) + the codec's bytes
//
// As with OpenTSDB's data points, the qualifier's width follows the
// timestamp's upper 32 bits (a millisecond timestamp on a whole second
// still gets 4 bytes), and the millisecond offset is raw, with no flags.
//
// # The simple histogram
//
// The bytes of SimpleHistogram.histogram, written with Kryo's Output:
//
//	[id]                    1 byte, in a stored value
//	count                   int16, big-endian: the number of buckets
//	count × (lo, hi, n)     lo and hi float32 big-endian (IEEE bits),
//	                        n a Kryo positive varint
//	underflow, overflow     Kryo positive varints
//
// A Kryo positive varint is 7 bits a byte, least significant first, the
// high bit set on every byte but the last; a ninth byte carries 8 bits,
// so a negative count takes nine bytes. Buckets are kept as OpenTSDB's
// TreeMap keeps them: sorted by lower then upper bound (Java's
// Float.compare order), one count per bound pair, the last one given
// winning. A value shorter than 6 bytes is refused as OpenTSDB refuses
// it; bytes after the overflow are ignored, as Kryo's reader does.
//
// # Percentiles
//
// Percentile is SimpleHistogram.percentile: p outside [1, 100] is -1;
// otherwise the buckets are walked in order, adding each count (as a Java
// int) until the running share of the total reaches p, and the answer is
// that bucket's midpoint computed in float32. Underflow and overflow do
// not count. A histogram with no counts answers 0.
package hist

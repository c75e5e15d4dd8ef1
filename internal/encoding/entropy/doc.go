// Package entropy is the entropy coder under tsd's dense column format
// (rowkey/doc.go): a byte-wise rANS coder, a bucket alphabet for 64-bit
// integers, and static models, either built in (chosen by one byte) or
// transmitted as a small table. It is pure: no I/O, and no allocation once
// an Encoder's buffers have grown.
//
// # Bucket alphabet
//
// An unsigned value u (usually a zigzagged delta) becomes one of 252
// symbols plus raw bits. u < 8 is its own symbol. Otherwise, with nb its bit
// length (4..64) and m2 the two bits just below its top bit, the symbol is
// 8 + 4*(nb-4) + m2 and the nb-3 low bits follow raw. So the coder models
// the magnitude to within a quarter octave and pays exactly one bit per
// remaining low bit, which is what noise costs anyway.
//
// # rANS stream
//
// The encoder's state x starts at 1 and lives in [2^23, 2^31) once it has
// emitted a byte. A symbol with frequency f and start c in a model of
// total 2^M encodes as x' = (x/f)<<M + x%f + c after emitting low bytes
// while x >= f<<(31-M); raw bits (at most 16 per token) encode as a symbol
// of frequency 1 in total 2^n. The encoder runs backwards over the queued
// tokens; the stream is the final state as 4 big-endian bytes, then the
// emitted bytes in reverse, which is the order the decoder reads them. A
// stream without tokens is empty. The decoder takes a byte whenever its
// state is below 2^23 and a byte is left: the encoder's state only
// dropped below 2^23 before its first byte, so once every byte is read
// the decoder is in those first steps. A decoder that finishes with every
// byte read and its state back at 1 has read a well-formed stream;
// anything else is ErrCorrupt. Corrupt bytes can only produce wrong
// symbols and that error, never a panic or a loop: every table slot is
// filled, and each refill step reads a byte or stops.
//
// Streams written before the start at 1 start at 2^23, rANS's usual
// choice (Decoder.InitLegacy; rowkey marks which with a header bit). The
// reader knows those 23 bits, yet the stream carries them: starting at 1
// makes a stream about 3 bytes shorter (TestRANSStartState).
//
// # Models
//
// Built-in model id (one byte): family id>>6, scale s = 2^((id&63)/4 - 2)
// (0.25 to about 13777). The families, over a signed delta d discretised
// on [d-1/2, d+1/2]: 0 Gaussian with sigma s; 1 Laplace with mean absolute
// deviation s; 2 and 3 Laplace mixed with a spike at zero of mass 0.5 and
// 0.9. Symbols below probability 1e-9 get no code, so the encoder must not
// pick a model that cannot code its data (Cost is +Inf). Their frequencies
// (total 4096) are frozen in models_gen.go so that no platform's math
// library can change a decoded byte.
//
// Transmitted table: first symbol, last symbol, then each frequency in that
// range as a uvarint, summing to 1024 with at least two non-zero entries.
//
// Why static models rather than adaptive coding: a row holds a few hundred
// points, too few for an adaptive coder to learn and too few to pay for a
// full table, while monitoring deltas are close to a few shapes (Gaussian
// noise, Laplace jumps, constant stretches). Picking the cheapest of 256
// fitted shapes costs one byte, and decoding is one table lookup and a
// multiply per symbol, faster than bit-by-bit adaptive decoding.
package entropy

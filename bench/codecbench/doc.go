// Package codecbench measures tsd's dense column (rowkey.DenseEncoder and
// DenseIter) against Prometheus's XOR chunks on the bench dataset: bytes per
// point and decoding speed, issue 5's figures.
//
// The dataset is cut the way each system stores it. tsd: one dense value per
// series and hour row (360 points at 10 s), the value bytes of fully flushed
// rows. Prometheus: XOR chunks of 120 samples (its head's target size), the
// chunk bytes without the block's segment framing.
package codecbench

// Package du measures the disk space files take as du(1) counts it: the
// blocks allocated to them, not their lengths. A preallocated write-ahead
// log counts whole though its length is what it holds, and a sparse file
// counts only the blocks written. The tests that compare a stopped
// store's footprint with the same store settled (storage/pebble's clean
// close, `tsd compact`) measure with it.
package du

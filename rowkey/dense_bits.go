package rowkey

import "math/bits"

func leadingZeros(x uint64) int  { return bits.LeadingZeros64(x) }
func trailingZeros(x uint64) int { return bits.TrailingZeros64(x) }

// Command tsdsalt prints how evenly the row-key salt spreads the bench devops
// series over salt buckets (issue 3, item 5): per-bucket series counts, mean,
// max, min and max/mean, then the same summary for width 0 (no salt) as a
// sanity line. See package bench/saltspread for how series, UIDs and buckets
// are obtained (a real uid.UIDs over storage/pebble, the real salt and rowkey
// packages).
//
// Usage:
//
//	tsdsalt                                  # 50,000 series, width 1, 20 buckets, seed 1
//	tsdsalt -series 200000 -buckets 64 -width 2
//	tsdsalt -mem=false                       # UID table on disk in a temp dir (fsync per assignment)
//
// The UID table lives in memory by default (-mem): the figure does not depend
// on durability, and an fsync per assignment would only slow it down.
package main

// Package saltspread measures how evenly tsd's row-key salt spreads the bench
// devops series over salt buckets (issue 3, item 5).
//
// The series are package gen's devops dataset: Hosts hosts with ten tags each
// (gen.TagKeys) times the ten cpu metrics, taken host by host and metric by
// metric, the order in which an ingest of the dataset first sees them (gen
// iterates time, then host, then metric). Resolve gives every name its UID
// through a real uid.UIDs on the caller's store with ResolvePoint, in that
// first-seen order, so the UIDs are the ones a fresh tsd would assign: the
// metric first, then each tag key and value in ascending tag-key order. Each
// resolved key is turned into a TSUID (tag pairs by tag-key UID bytes, as
// head.SortSeriesKey and row keys order them).
//
// Spread builds each series' row key for the dataset's first hour with
// rowkey.Layout.AppendRowKeyFromTSUID and reads its bucket back from the key's
// leading Width salt bytes (salt.Decode), checking it against salt.Bucket of
// the TSUID. Width 0 has no salt bytes: every series is in bucket 0.
//
// The figure is a deterministic function of the data, the UID assignment order
// and the hash (Java's Arrays.hashCode, see package salt): it is not a timing,
// so a test can assert it. Its headline is max/mean, the most loaded bucket over
// the average load; 1.0 is a perfect spread.
package saltspread

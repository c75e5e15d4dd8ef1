package schema

import "github.com/tsd-db/tsd/storage"

// Default table names, OpenTSDB's where OpenTSDB has the table
// (tsd.storage.hbase.data_table, uid_table and meta_table).
const (
	// DefaultDataTable holds the data points.
	DefaultDataTable = "tsdb"
	// DefaultUIDTable holds the UID maps (package uid owns its layout).
	DefaultUIDTable = "tsdb-uid"
	// DefaultMetaTable is tsd's own table: the settings record, the
	// series index and the rows awaiting compaction.
	DefaultMetaTable = "tsdb-meta"
)

// DataFamily is the data table's one family, OpenTSDB's "t".
const DataFamily = "t"

// DataTableSpec returns the data table's layout as OpenTSDB creates it:
// family t, one version, no TTL.
func DataTableSpec(name string) storage.TableSpec {
	return storage.TableSpec{Name: name, Families: []storage.FamilySpec{{Name: DataFamily, MaxVersions: 1}}}
}

// Families of the meta table; doc.go gives their rows.
const (
	// MetaFamilyRecord holds the settings record.
	MetaFamilyRecord = "r"
	// MetaFamilyIndex is reserved for the series index and its series-id
	// counter (package uid/index).
	MetaFamilyIndex = "x"
	// MetaFamilyCompaction is reserved for the rows awaiting compaction
	// (the write path).
	MetaFamilyCompaction = "q"
	// MetaFamilyTSMeta holds each series' TSMeta: the user's fields and
	// the tracked counters (package uid/tsmeta).
	MetaFamilyTSMeta = "m"
)

// Row keys and prefixes of the meta table. Callers must not modify them.
var (
	// MetaRecordRow is the settings record's row.
	MetaRecordRow = []byte("\x00record")
	// MetaSeriesIDRow is the series-id counter's row (family x, qualifier
	// "max", 8-byte big-endian, like MAXID).
	MetaSeriesIDRow = []byte("\x00series_id")
	// MetaIndexPrefix starts every series-index row (family x).
	MetaIndexPrefix = []byte{0x01}
	// MetaCompactionPrefix starts every row-awaiting-compaction row
	// (family q): the prefix then the data row key.
	MetaCompactionPrefix = []byte{0x02}
	// MetaTSMetaPrefix starts every TSMeta row (family m): the prefix then
	// the TSUID.
	MetaTSMetaPrefix = []byte{0x03}
)

// MetaTableSpec returns the meta table's layout: families r, x, q and m,
// one version each, no TTL.
func MetaTableSpec(name string) storage.TableSpec {
	return storage.TableSpec{Name: name, Families: []storage.FamilySpec{
		{Name: MetaFamilyRecord, MaxVersions: 1},
		{Name: MetaFamilyIndex, MaxVersions: 1},
		{Name: MetaFamilyCompaction, MaxVersions: 1},
		{Name: MetaFamilyTSMeta, MaxVersions: 1},
	}}
}

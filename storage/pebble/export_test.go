package pebble

// CellKey returns the pebble key of a cell of table, for tests that check
// key ranges.
func CellKey(db *DB, table string, row []byte, family string, qualifier []byte, ts int64) []byte {
	db.cat.Lock()
	defer db.cat.Unlock()
	return AppendCellKey(nil, db.cat.tables[table].id, row, family, qualifier, ts)
}

// CopyDir is the damage tests' store copy (damage_log_test.go) for the
// external tests.
var CopyDir = copyDir

// SmallBlocks sets o's bottom level to write 16 KiB blocks, for the
// damaged-sstable tests (Options.bottomBlockSize) and returns o.
func SmallBlocks(o *Options) *Options {
	o.bottomBlockSize = 16 << 10
	return o
}

package pebble

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/ratelog"
	"github.com/tsd-db/tsd/storage"
)

// Compression names a block compression setting for the store's sstables.
type Compression string

// Compression settings.
const (
	// CompressionSmall uses the fastest codec in the upper levels, which
	// flushes and most compactions write, and zstd at a high level in 16
	// KiB blocks (bottomProfile, bottomBlockSize) in the bottom level,
	// where a settled store's bytes live. Pebble moves a file down the
	// levels without rewriting it when nothing below overlaps it (the
	// first flush into an empty store, a bulk load), so upper-level files
	// can reach the bottom: Compact rewrites them (rewriteMoved).
	CompressionSmall Compression = "small"
	// CompressionBalanced uses a fast codec in the upper levels and zstd in
	// the two bottom levels, where most bytes live.
	CompressionBalanced Compression = "balanced"
	// CompressionFastest uses the fastest codec on every level.
	CompressionFastest Compression = "fastest"
	// CompressionGood uses zstd on the bottom levels at a higher level.
	CompressionGood Compression = "good"
	// CompressionZstd uses zstd on every level.
	CompressionZstd Compression = "zstd"
	// CompressionNone stores blocks uncompressed.
	CompressionNone Compression = "none"
)

// Options configure Open. The zero value, or a nil *Options, is valid and
// means every default.
type Options struct {
	// FS is the filesystem holding the store. The ingest write-ahead log
	// uses the same value, so one vfs.MemFS CrashClone captures both.
	// Default vfs.Default.
	FS vfs.FS
	// Logger receives pebble's messages (its informational ones at Debug
	// level) and background errors. Default slog.Default().
	Logger *slog.Logger
	// Clock gives the time used for zero cell timestamps and for TTL
	// expiry. Default time.Now.
	Clock func() time.Time
	// CacheSize is the block cache size in bytes. Default 64 MiB. Pebble
	// charges its memtables (the live one, and one being flushed or
	// flushed but pinned by an open iterator) to the block cache, so the
	// cache pebble gets is CacheSize plus two memtables: without that
	// margin two 32 MiB memtables left a 64 MiB cache no room and every
	// read decompressed its blocks again.
	CacheSize int64
	// MemTableSize is the size of one memtable in bytes; writes stall when
	// two are full and unflushed. Default 32 MiB.
	MemTableSize uint64
	// GCInterval is how often the background collector deletes expired
	// and surplus versions so their space comes back. Zero means the
	// default of 10 minutes; a negative value disables the collector
	// (TTL and MaxVersions still hold at read time).
	GCInterval time.Duration
	// Compression is the sstable block compression. Default
	// CompressionSmall.
	Compression Compression
	// BloomBitsPerKey sizes the per-row bloom filters that let prefix seeks
	// (read-modify-write) of a missing row skip sstables. Default 10 (about
	// 1 % false positives).
	BloomBitsPerKey int
	// MaxOpenFiles bounds the files pebble keeps open: its cache of open
	// sstables holds this many less the handful pebble keeps for its own
	// log, manifest and lock. It is a soft limit (sstables being written
	// and iterators pinning evicted tables add a few); the daemon reserves
	// descriptors for it before it lets clients connect. Default 1000
	// (DefaultMaxOpenFiles).
	MaxOpenFiles int
	// MinFreeBytes is the free space the store keeps on its file system
	// for pebble's own flushes and compactions and its callers' logs:
	// while less is available, writes are refused with storage.ErrReadOnly
	// naming the figures, and a store opened with less opens pebble
	// read-only (space.go). Writes resume once an eighth more than
	// MinFreeBytes is free. Free space is read through FS.GetDiskUsage; a
	// file system that does not report it (vfs.MemFS unless told) is never
	// short. Default 256 MiB; negative disables the check (a full disk
	// still makes the store read-only rather than crash it).
	MinFreeBytes int64
	// FreeCheckInterval is how often free space is read. Default 10 s.
	FreeCheckInterval time.Duration
	// RateLog takes the store's repeated warnings (refusing writes, at
	// most one line a minute; pebble's background errors). Default one of
	// its own on Logger.
	RateLog *ratelog.Logger
	// ObserveWriteStall, if set, is given the duration of every write
	// stall when it ends (pebble holding writes back because flushes or
	// level-0 compactions are behind), from pebble's event goroutine: it
	// must be quick and must not call the store. The daemon feeds a
	// latency histogram with it. Default none.
	ObserveWriteStall func(time.Duration)

	// noSync turns off fsync on writes. Tests use it to prove the power-loss
	// test detects a missing sync; it is unexported so no caller can lose
	// acknowledged writes by accident.
	noSync bool
	// bottomBlockSize, when not 0, replaces the constant of that name.
	// The damaged-sstable tests write smaller blocks: pebble's bit-flip
	// search on a damaged block is quadratic in its size, and what they
	// check does not depend on it.
	bottomBlockSize int
}

// DefaultMaxOpenFiles is Options.MaxOpenFiles' default, pebble's own.
const DefaultMaxOpenFiles = 1000

const (
	defaultCacheSize    = 64 << 20
	defaultMemTableSize = 32 << 20
	defaultGCInterval   = 10 * time.Minute
	defaultBloomBits    = 10
	// defaultIndexBlockSize is pebble's index block size, kept when the
	// bottom level's data blocks grow (pebble would size its index blocks
	// like them).
	defaultIndexBlockSize = 4 << 10
	// DefaultMinFreeBytes is Options.MinFreeBytes' default, 256 MiB.
	DefaultMinFreeBytes = 256 << 20
	// DefaultFreeCheckInterval is Options.FreeCheckInterval's default.
	DefaultFreeCheckInterval = 10 * time.Second
)

// EnsureDefaults fills unset fields with their defaults and returns o; a nil
// o yields a fresh Options.
func (o *Options) EnsureDefaults() *Options {
	if o == nil {
		o = &Options{}
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.CacheSize == 0 {
		o.CacheSize = defaultCacheSize
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = defaultMemTableSize
	}
	if o.GCInterval == 0 {
		o.GCInterval = defaultGCInterval
	}
	if o.Compression == "" {
		o.Compression = CompressionSmall
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = defaultBloomBits
	}
	if o.MaxOpenFiles == 0 {
		o.MaxOpenFiles = DefaultMaxOpenFiles
	}
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = DefaultMinFreeBytes
	}
	if o.FreeCheckInterval == 0 {
		o.FreeCheckInterval = DefaultFreeCheckInterval
	}
	if o.RateLog == nil {
		o.RateLog = ratelog.New(ratelog.Options{Logger: o.Logger})
	}
	return o
}

// Validate reports settings that cannot work.
func (o *Options) Validate() error {
	if o.CacheSize < 0 {
		return storage.Invalidf("pebble options: negative CacheSize %d", o.CacheSize)
	}
	if o.MemTableSize < 1<<20 || o.MemTableSize >= 4<<30 {
		return storage.Invalidf("pebble options: MemTableSize %d outside [1 MiB, 4 GiB)", o.MemTableSize)
	}
	if o.BloomBitsPerKey < 1 || o.BloomBitsPerKey > 64 {
		return storage.Invalidf("pebble options: BloomBitsPerKey %d outside [1, 64]", o.BloomBitsPerKey)
	}
	if o.MaxOpenFiles < 1 {
		return storage.Invalidf("pebble options: MaxOpenFiles %d below 1", o.MaxOpenFiles)
	}
	if _, ok := compressionSettings[o.Compression]; !ok {
		return storage.Invalidf("pebble options: unknown Compression %q", o.Compression)
	}
	if o.FreeCheckInterval < 0 {
		return storage.Invalidf("pebble options: negative FreeCheckInterval %v", o.FreeCheckInterval)
	}
	return nil
}

var compressionSettings = map[Compression]pebble.DBCompressionSettings{
	CompressionSmall:    smallSettings(),
	CompressionBalanced: pebble.DBCompressionBalanced,
	CompressionFastest:  pebble.DBCompressionFastest,
	CompressionGood:     pebble.DBCompressionGood,
	CompressionZstd:     pebble.UniformDBCompressionSettings(sstable.ZstdCompression),
	CompressionNone:     pebble.DBCompressionNone,
}

// bottomZstdLevel is CompressionSmall's zstd level in the bottom level:
// the pure-Go coder's best (klauspost/compress maps 10 and above to
// SpeedBestCompression). Rewriting a settled store of the bench devops day
// (8.64 M integer points) into one sstable of 64 KiB blocks without
// filters took 2.98 MB at this level, 3.09 MB at level 7, 3.20 MB at
// level 3 and 3.32 MB with pebble's Balanced profile (zstd level 1 with
// its fallback); the price is compression CPU, paid once per byte that
// reaches the bottom level.
const bottomZstdLevel = 10

// otherZstdLevel is CompressionSmall's zstd level for the bottom level's
// index and other blocks. Without cgo pebble makes a new pure-Go encoder
// for every sstable it writes and every kind of block, and one at the best
// level holds 34 MiB of match tables: a second such encoder per file for
// its few index blocks took a compaction of the bench devops day (POST
// /api/compact) from 160 to 228 MB of anonymous memory at its peak, and
// saved no byte of the settled store (2,920,448 bytes either way).
const otherZstdLevel = 3

// bottomProfile is CompressionSmall's profile in the bottom level: zstd
// at bottomZstdLevel for data and value blocks, kept whenever it saves
// anything (pebble's own profiles store a block raw when zstd saves under
// 5-12 %, or fall back to a fast codec when zstd gains under 10-20 % on
// it, which on blocks of dense columns, already entropy coded, is often).
// Index and other blocks take zstd's level 3 (otherZstdLevel).
var bottomProfile = func() *sstable.CompressionProfile {
	p := *sstable.ZstdCompression
	p.Name = "tsd-bottom"
	p.DataBlocks.Level = bottomZstdLevel
	p.ValueBlocks.Level = bottomZstdLevel
	p.OtherBlocks.Level = otherZstdLevel
	p.MinReductionPercent = 1
	return &p
}()

// bottomBlockSize is CompressionSmall's data block size in the bottom
// level. zstd finds the repeats between row keys (the same tags, hour
// after hour) only within a block, and pebble's default of 4 KiB holds
// about 20 data rows: the same rewrite as above (columnar blocks) took
// 3.37 MB in 4 KiB blocks, 3.08 in 16 KiB, 3.02 in 32 KiB and 2.98 in
// 64 KiB. Through the daemon in row blocks (bench/cmd/tsdvm, the devops
// day settled): 2,924,544 bytes in 16 KiB blocks, 2,875,392 in 32 KiB.
// The price is damaged blocks: on a checksum mismatch pebble tries every
// single-bit flip of the block to report it, a cost quadratic in the
// block's size paid by every read that meets it. TestDamagedSSTables
// took 17 s with 16 KiB blocks, 72 s with 32 KiB and 45 times the first
// with 64 KiB, which are not taken; its store now writes 16 KiB blocks
// (Options.bottomBlockSize), as what it checks does not depend on them.
const bottomBlockSize = 32 << 10

// bottomRestartInterval is the keys between restart points in the bottom
// level's row blocks (pebble's default is 16). A key after a restart is
// written whole, the others as their difference from the key before; a
// seek searches the restarts, then steps through at most this many keys.
// The devops day rewritten into one sstable: 2,903,050 bytes at 16,
// 2,887,549 at 64.
const bottomRestartInterval = 64

// recordedName is the compression name pebble records in the properties
// of an sstable written with p. Row-block sstables cannot hold MinLZ, so
// pebble writes a profile that uses it as Snappy, whole, and records that.
func recordedName(p *sstable.CompressionProfile) string {
	if p.UsesMinLZ() {
		return sstable.SnappyCompression.Name
	}
	return p.Name
}

// smallSettings is CompressionSmall: the fastest codec above the bottom
// level, bottomProfile in it.
func smallSettings() pebble.DBCompressionSettings {
	cs := pebble.DBCompressionFastest
	cs.Name = "tsd-small"
	cs.Levels[len(cs.Levels)-1] = bottomProfile
	return cs
}

// pebbleOptions translates o (with defaults) into pebble's options; d
// hears of a full disk (diskFull) from pebble's logger and events.
func (o *Options) pebbleOptions(lock *pebble.Lock, d *DB) *pebble.Options {
	po := &pebble.Options{
		FS:                 d.logFS,
		Lock:               lock,
		CacheSize:          o.CacheSize + 2*int64(o.MemTableSize),
		MemTableSize:       o.MemTableSize,
		MaxOpenFiles:       o.MaxOpenFiles,
		Comparer:           comparer,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             slogAdapter{l: o.Logger, d: d},
		EventListener:      &pebble.EventListener{BackgroundError: d.backgroundError},
	}
	cs := compressionSettings[o.Compression]
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return cs })
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
	}
	bottom := &po.Levels[len(po.Levels)-1]
	if o.Compression == CompressionSmall {
		bottom.BlockSize = cmp.Or(o.bottomBlockSize, bottomBlockSize)
		bottom.IndexBlockSize = defaultIndexBlockSize
		bottom.BlockRestartInterval = bottomRestartInterval
	}
	// The bottom level holds nearly every row, so a prefix seek that
	// reaches it mostly finds its row: its filter would only spare reads
	// of rows that do not exist, for about 1 % of a settled store
	// (RocksDB's optimize_filters_for_hits). The levels above keep theirs.
	bottom.FilterPolicy = pebble.NoFilterPolicy
	// All cells of a row share one pebble prefix; pebble would otherwise
	// move every value but a row's first into separate value blocks, which
	// makes row scans read twice the blocks.
	po.Experimental.SpanPolicyFunc = func([]byte) (pebble.SpanPolicy, []byte, error) {
		return pebble.SpanPolicy{DisableValueSeparationBySuffix: true}, nil, nil
	}
	// Row blocks, not pebble's columnar ones, at FormatNewest: a row
	// block stores each key as its difference from the key before, which
	// zstd then shrinks further, while a columnar block keeps 2-byte
	// offsets per key that it barely shrinks. The devops day rewritten
	// into one sstable took 3,047,988 bytes columnar and 2,903,050 in row
	// blocks. The format stays FormatNewest, not the older formats whose
	// newest sstables are row blocks: those write no sync chunks in the
	// log, and a damaged byte there would pass for its torn end
	// (TestDamagedLogSalvaged). Stores with columnar sstables still read
	// them; compactions rewrite them as row blocks.
	po.Experimental.EnableColumnarBlocks = func() bool { return false }
	po.EnsureDefaults()
	return po
}

// slogAdapter routes pebble's logging to slog, and a fatal error caused
// by a full disk to its DB.
type slogAdapter struct {
	l *slog.Logger
	d *DB
}

func (a slogAdapter) Infof(format string, args ...any) {
	a.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (a slogAdapter) Errorf(format string, args ...any) {
	a.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by pebble for states it cannot survive and never
// expects to return from. A full disk is one: pebble calls Fatalf when a
// write to its log or manifest fails with ENOSPC. That is no reason to
// crash the daemon, whose acknowledged writes are all synced in pebble's
// log, so the DB is told (diskFull) and Fatalf returns: the commit that
// failed then reports the disk full, every later write is refused, and the
// DB reopens pebble, which replays its log. Any other fatal state is a
// broken invariant: the message is logged and the panic carries it.
func (a slogAdapter) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if err := noSpaceArg(args); err != nil && a.d != nil {
		a.d.diskFull(&fatalError{msg: msg, err: err})
		return
	}
	a.l.Log(context.Background(), slog.LevelError+4, msg, "component", "pebble")
	panic("pebble: fatal: " + msg)
}

// fatalError is a Fatalf message that carries its error argument.
type fatalError struct {
	msg string
	err error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.err }

// noSpaceArg returns the first argument that is an error caused by a full
// disk, or nil.
func noSpaceArg(args []any) error {
	for _, a := range args {
		if err, ok := a.(error); ok && vfs.IsNoSpaceError(err) {
			return err
		}
	}
	return nil
}

// backgroundError hears pebble's failed flushes and compactions. A full
// disk makes the DB read-only (pebble would retry the flush in a tight
// loop); anything else is logged, at most a line a minute.
func (d *DB) backgroundError(err error) {
	if vfs.IsNoSpaceError(err) {
		d.diskFull(err)
		return
	}
	if errors.Is(err, pebble.ErrCancelledCompaction) {
		return
	}
	d.opts.RateLog.Error("pebble.background", "", "pebble background error", "component", "pebble",
		"dir", d.dir, "err", err)
}

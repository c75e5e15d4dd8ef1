package pebble

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/storage"
)

// Compression names a block compression setting for the store's sstables.
type Compression string

// Compression settings.
const (
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
	// CacheSize is the block cache size in bytes. Default 64 MiB.
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
	// CompressionBalanced.
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

	// noSync turns off fsync on writes. Tests use it to prove the power-loss
	// test detects a missing sync; it is unexported so no caller can lose
	// acknowledged writes by accident.
	noSync bool
}

// DefaultMaxOpenFiles is Options.MaxOpenFiles' default, pebble's own.
const DefaultMaxOpenFiles = 1000

const (
	defaultCacheSize    = 64 << 20
	defaultMemTableSize = 32 << 20
	defaultGCInterval   = 10 * time.Minute
	defaultBloomBits    = 10
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
		o.Compression = CompressionBalanced
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = defaultBloomBits
	}
	if o.MaxOpenFiles == 0 {
		o.MaxOpenFiles = DefaultMaxOpenFiles
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
	return nil
}

var compressionSettings = map[Compression]pebble.DBCompressionSettings{
	CompressionBalanced: pebble.DBCompressionBalanced,
	CompressionFastest:  pebble.DBCompressionFastest,
	CompressionGood:     pebble.DBCompressionGood,
	CompressionZstd:     pebble.UniformDBCompressionSettings(sstable.ZstdCompression),
	CompressionNone:     pebble.DBCompressionNone,
}

// pebbleOptions translates o (with defaults) into pebble's options.
func (o *Options) pebbleOptions(lock *pebble.Lock) *pebble.Options {
	po := &pebble.Options{
		FS:                 o.FS,
		Lock:               lock,
		CacheSize:          o.CacheSize,
		MemTableSize:       o.MemTableSize,
		MaxOpenFiles:       o.MaxOpenFiles,
		Comparer:           comparer,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             slogAdapter{o.Logger},
	}
	cs := compressionSettings[o.Compression]
	po.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return cs })
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
	}
	// All cells of a row share one pebble prefix; pebble would otherwise
	// move every value but a row's first into separate value blocks, which
	// makes row scans read twice the blocks.
	po.Experimental.SpanPolicyFunc = func([]byte) (pebble.SpanPolicy, []byte, error) {
		return pebble.SpanPolicy{DisableValueSeparationBySuffix: true}, nil, nil
	}
	po.EnsureDefaults()
	return po
}

// slogAdapter routes pebble's logging to slog.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Infof(format string, args ...any) {
	a.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (a slogAdapter) Errorf(format string, args ...any) {
	a.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is only called by pebble for states it cannot survive (it never
// expects Fatalf to return), so the message is logged and the panic carries it.
func (a slogAdapter) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	a.l.Log(context.Background(), slog.LevelError+4, msg, "component", "pebble")
	panic("pebble: fatal: " + msg)
}

package pebble

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// The store keeps a byte copy of pebble's current MANIFEST-NNNNNN beside
// it, TSD-MANIFEST-NNNNNN (a name pebble ignores). Pebble only appends to a
// MANIFEST until it starts a new one, so the copy is the MANIFEST's first
// bytes: the mirror goroutine appends what the MANIFEST gained after each
// flush, compaction or ingestion (pebble's events wake it) and every
// mirrorInterval, and syncs it; a new MANIFEST gets a new copy and the old
// one is removed. At open, a MANIFEST with a record that cannot be read
// where the copy holds it is mended from the copy (restoreManifest): the
// copy's bytes up to its length, the MANIFEST's after, once every record of
// the result reads; the damaged file is kept as MANIFEST-NNNNNN.damaged.
// That covers the last record too, which checkManifest cannot tell from a
// torn end. A damaged copy is only rewritten: the MANIFEST is read first.

const (
	mirrorPrefix   = "TSD-"
	mirrorInterval = 10 * time.Second
)

// manifestMirror is the mirror goroutine's state; DB owns it
// (startMirror, stopMirror).
type manifestMirror struct {
	fs   vfs.FS
	dir  string
	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	// Only the goroutine uses these.
	name string   // the MANIFEST mirrored, "MANIFEST-000005"
	f    vfs.File // its copy, open for writing
	n    int64    // bytes copied
}

// startMirror starts the mirror goroutine; pebble's events in po wake it.
func (d *DB) startMirror() {
	m := &manifestMirror{fs: d.opts.FS, dir: d.dir, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	d.mirror.Store(m)
	go func() {
		defer close(m.done)
		t := time.NewTicker(mirrorInterval)
		defer t.Stop()
		var last string // the last error logged: a full disk logs once
		for {
			if err := m.sync(); err != nil && err.Error() != last {
				last = err.Error()
				d.opts.Logger.Warn("pebble manifest copy", "dir", d.dir, "err", err)
			}
			select {
			case <-m.stop:
				m.sync()
				m.close()
				return
			case <-m.kick:
			case <-t.C:
			}
		}
	}()
}

// stopMirror brings the copy up to date and stops the goroutine.
func (d *DB) stopMirror() {
	if m := d.mirror.Load(); m != nil {
		close(m.stop)
		<-m.done
	}
}

// listenForManifest wakes the mirror goroutine after each event that
// changes the MANIFEST.
func (d *DB) listenForManifest(po *pebble.Options) {
	wake := func() {
		if m := d.mirror.Load(); m != nil {
			select {
			case m.kick <- struct{}{}:
			default:
			}
		}
	}
	el := po.EventListener
	el.FlushEnd = andThen(el.FlushEnd, wake)
	el.CompactionEnd = andThen(el.CompactionEnd, wake)
	el.TableIngested = andThen(el.TableIngested, wake)
	el.ManifestCreated = andThen(el.ManifestCreated, wake)
}

// andThen returns an event handler that calls f, if set, then g.
func andThen[T any](f func(T), g func()) func(T) {
	return func(info T) {
		if f != nil {
			f(info)
		}
		g()
	}
}

// sync appends to the copy what the current MANIFEST gained, or starts a
// new copy when pebble started a new MANIFEST.
func (m *manifestMirror) sync() error {
	desc, err := pebble.Peek(m.dir, m.fs)
	if err != nil || !desc.Exists || desc.ManifestFilename == "" {
		return err
	}
	name := m.fs.PathBase(desc.ManifestFilename)
	src, err := m.fs.Open(m.fs.PathJoin(m.dir, name))
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	if name != m.name || st.Size() < m.n {
		if err := m.restart(name); err != nil {
			return err
		}
	}
	if st.Size() == m.n {
		return nil
	}
	buf := make([]byte, st.Size()-m.n)
	if _, err := src.ReadAt(buf, m.n); err != nil && err != io.EOF {
		return err
	}
	if _, err := m.f.Write(buf); err != nil {
		return err
	}
	if err := m.f.Sync(); err != nil {
		return err
	}
	m.n += int64(len(buf))
	return nil
}

// restart starts an empty copy of the MANIFEST name and removes the copies
// of older ones.
func (m *manifestMirror) restart(name string) error {
	m.close()
	f, err := m.fs.Create(m.fs.PathJoin(m.dir, mirrorPrefix+name), vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if err := durable.SyncDir(m.fs, m.dir); err != nil {
		f.Close()
		return err
	}
	m.name, m.f, m.n = name, f, 0
	names, err := m.fs.List(m.dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.HasPrefix(n, mirrorPrefix+"MANIFEST-") && n != mirrorPrefix+name {
			if err := m.fs.Remove(m.fs.PathJoin(m.dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *manifestMirror) close() {
	if m.f != nil {
		m.f.Close()
		m.f, m.name, m.n = nil, "", 0
	}
}

// restoreManifest mends the MANIFEST at path, whose bytes data cannot be
// read from the record at at, from its copy when the copy reaches that
// record, and returns the mended bytes; nil when it did not mend.
func (d *DB) restoreManifest(path string, data []byte, at int64) ([]byte, error) {
	fs := d.opts.FS
	mirror, err := readFile(fs, fs.PathJoin(d.dir, mirrorPrefix+fs.PathBase(path)))
	if err != nil || int64(len(mirror)) <= at {
		return nil, nil // no copy, or it ends before the bad record
	}
	mended := append(mirror[:len(mirror):len(mirror)], data[min(len(mirror), len(data)):]...)
	if at2, bad2 := firstBadRecord(mended); bad2 && at2 < int64(len(mirror)) {
		return nil, nil // the copy is damaged there too
	}
	// durable.WriteFile may reuse what it is given (pebble's in-memory files
	// mangle it in invariants builds): the caller reads mended again.
	if err := durable.WriteFile(fs, path+".damaged", data, vfs.WriteCategoryUnspecified); err != nil {
		return nil, fmt.Errorf("keep %s: %w", path, err)
	}
	if err := durable.WriteFile(fs, path, slices.Clone(mended), vfs.WriteCategoryUnspecified); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	d.restoredManifests.Add(1)
	d.opts.Logger.Error("pebble manifest damaged: mended from its copy, the original kept beside it",
		"file", path, "kept", path+".damaged", "damaged_at", at, "copy_bytes", len(mirror))
	return mended, nil
}

// RestoredManifests returns how many times an open mended pebble's
// MANIFEST from its copy since Open.
func (d *DB) RestoredManifests() int64 { return d.restoredManifests.Load() }

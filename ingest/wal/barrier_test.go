package wal

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// syncCountFS counts the syncs of the files it creates.
type syncCountFS struct {
	vfs.FS
	syncs atomic.Int64
}

func (fs *syncCountFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &syncCountFile{File: f, fs: fs}, nil
}

func (fs *syncCountFS) Unwrap() vfs.FS { return fs.FS }

type syncCountFile struct {
	vfs.File
	fs *syncCountFS
}

func (f *syncCountFile) Sync() error {
	f.fs.syncs.Add(1)
	return f.File.Sync()
}

// TestSyncTo: SyncTo makes the bytes below the end it is given durable,
// syncs nothing when they already are, and one sync covers every record
// written before it started, whoever asks for it afterwards.
func TestSyncTo(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fs := &syncCountFS{FS: mem}
	l, _ := mustOpen(t, fs, quietOpts(0))
	defer l.Close()
	base := fs.syncs.Load()
	if err := l.SyncTo(l.Written()); err != nil || fs.syncs.Load() != base {
		t.Fatalf("SyncTo with nothing written: %v, %d syncs", err, fs.syncs.Load()-base)
	}
	appendPayload(l, "a", false)
	endA := l.Written()
	appendPayload(l, "b", false)
	endB := l.Written()
	if endA == 0 || endB <= endA {
		t.Fatalf("ends %d, %d", endA, endB)
	}
	if err := l.SyncTo(endA); err != nil {
		t.Fatal(err)
	}
	if err := l.SyncTo(endB); err != nil { // covered by the first sync
		t.Fatal(err)
	}
	if n := fs.syncs.Load() - base; n != 1 {
		t.Errorf("%d syncs for two barriers over records written before the first, want 1", n)
	}
	appendPayload(l, "c", false) // written, never synced
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	l2, c := mustOpen(t, clone, quietOpts(0))
	defer l2.Close()
	if got := c.payloads(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("after power loss the log holds %q, want the synced a and b", got)
	}

	// Concurrent barriers all return, each after a sync covering its
	// record, and share syncs: never more than one per barrier.
	before := fs.syncs.Load()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			appendPayload(l, "x", false)
			if err := l.SyncTo(l.Written()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := fs.syncs.Load() - before; n < 1 || n > 16 {
		t.Errorf("%d syncs for 16 barriers", n)
	}
	l.mu.Lock()
	synced, written := l.mu.synced, l.mu.written
	l.mu.Unlock()
	if synced != written {
		t.Errorf("synced %d of %d bytes after every barrier returned", synced, written)
	}
}

// stallSyncFS holds every sync of the files it creates until release is
// closed, telling started when one begins.
type stallSyncFS struct {
	vfs.FS
	hold    atomic.Bool
	started chan struct{}
	release chan struct{}
}

func (fs *stallSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &stallSyncFile{File: f, fs: fs}, nil
}

func (fs *stallSyncFS) Unwrap() vfs.FS { return fs.FS }

type stallSyncFile struct {
	vfs.File
	fs *stallSyncFS
}

func (f *stallSyncFile) Sync() error {
	if f.fs.hold.Load() {
		f.fs.started <- struct{}{}
		<-f.fs.release
	}
	return f.File.Sync()
}

// TestWritesGoOnDuringSync: while a barrier's sync is in flight, appends
// of other writers are written (not queued behind the sync), and the sync
// covers only what was written before it began: a later barrier syncs
// again. Writers that waited out every fsync made a barrier per client
// cost every client's throughput.
func TestWritesGoOnDuringSync(t *testing.T) {
	fs := &stallSyncFS{FS: vfs.NewMem(), started: make(chan struct{}, 1), release: make(chan struct{})}
	l, _ := mustOpen(t, fs, quietOpts(0))
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { fs.hold.Store(false); close(fs.release) }) }
	defer l.Close()
	defer release() // before Close, which would wait for the held sync
	appendPayload(l, "before", false)
	endBefore := l.Written()
	fs.hold.Store(true)
	barrier := make(chan error, 1)
	go func() { barrier <- l.SyncTo(endBefore) }()
	<-fs.started
	appended := make(chan error, 1)
	go func() { appended <- appendPayload(l, "during", false) }()
	select {
	case err := <-appended:
		if err != nil {
			t.Fatal(err)
		}
	case <-barrier:
		t.Fatal("the barrier returned while its sync was held")
	case <-time.After(30 * time.Second):
		t.Fatal("an append waited for the sync in flight")
	}
	endDuring := l.Written()
	release()
	if err := <-barrier; err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	synced := l.mu.synced
	l.mu.Unlock()
	if synced != endBefore {
		t.Errorf("synced %d after the held sync, want %d (the bytes written before it began)", synced, endBefore)
	}
	if err := l.SyncTo(endDuring); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	synced = l.mu.synced
	l.mu.Unlock()
	if synced != endDuring {
		t.Errorf("synced %d after the second barrier, want %d", synced, endDuring)
	}
}

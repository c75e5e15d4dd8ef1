package pebble

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// stallStats follows pebble's write stalls (its WriteStallBegin and
// WriteStallEnd events): a stall is writes held back because flushes or
// L0 compactions are behind. Each ended stall's duration goes to
// Options.ObserveWriteStall.
type stallStats struct {
	begin atomic.Int64 // unix nanos of the current stall's start, 0 if none
}

// listenForStalls follows write stalls on d besides po's own listeners.
func (d *DB) listenForStalls(po *pebble.Options) {
	begin, end := po.EventListener.WriteStallBegin, po.EventListener.WriteStallEnd
	po.EventListener.WriteStallBegin = func(info pebble.WriteStallBeginInfo) {
		d.stalls.begin.Store(time.Now().UnixNano())
		if begin != nil {
			begin(info)
		}
	}
	po.EventListener.WriteStallEnd = func() {
		if b := d.stalls.begin.Swap(0); b != 0 && d.opts.ObserveWriteStall != nil {
			d.opts.ObserveWriteStall(time.Duration(time.Now().UnixNano() - b))
		}
		if end != nil {
			end()
		}
	}
}

// Stalled returns how long the write stall going on has lasted, 0 if
// none: a stall is only observed when it ends, and this shows one that
// does not.
func (d *DB) Stalled() time.Duration {
	if b := d.stalls.begin.Load(); b != 0 {
		return time.Duration(max(0, time.Now().UnixNano()-b))
	}
	return 0
}

// TableUsage is one table's estimated bytes on disk.
type TableUsage struct {
	Table string
	Bytes uint64
}

// DiskUsageByTable estimates each table's bytes on disk (pebble's
// EstimateDiskUsage over the table's key range: the sstables that
// overlap it, prorated), in table name order; nil after Close.
func (d *DB) DiskUsageByTable() []TableUsage {
	if d.enter() != nil {
		return nil
	}
	defer d.leave()
	d.cat.Lock()
	type span struct {
		name string
		id   uint32
	}
	spans := make([]span, 0, len(d.cat.tables))
	for name, t := range d.cat.tables {
		spans = append(spans, span{name, t.id})
	}
	d.cat.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i].name < spans[j].name })
	out := make([]TableUsage, 0, len(spans))
	for _, s := range spans {
		lo := appendID(nil, s.id)
		n, err := d.pdb.EstimateDiskUsage(lo, prefixSuccessor(nil, lo))
		if err != nil {
			continue
		}
		out = append(out, TableUsage{Table: s.name, Bytes: n})
	}
	return out
}

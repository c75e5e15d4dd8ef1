package main

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/bench/load"
	"github.com/tsd-db/tsd/bench/procstat"
)

// loaded is a daemon that has taken the dataset and is still up, with
// what was measured of it so far.
type loaded struct {
	d    *daemon
	lr   loadRun
	s    side
	cpu0 float64 // the daemon's CPU seconds before the load
}

// startLoaded starts the daemon of lr on lr.dir and loads the dataset
// over lr.format; on an error the daemon is stopped.
func startLoaded(ctx context.Context, f *flags, lr loadRun, logf func(string, ...any)) (*loaded, error) {
	var d *daemon
	var err error
	if lr.which == "vm" {
		d, err = startVM(ctx, lr.bin, lr.dir)
	} else {
		d, err = startTSD(ctx, lr.bin, lr.dir, f.rollups)
	}
	if err != nil {
		return nil, err
	}
	l := &loaded{d: d, lr: lr}
	if err := l.load(ctx, f, logf); err != nil {
		d.stop()
		return nil, err
	}
	return l, nil
}

// load runs the loader against the daemon.
func (l *loaded) load(ctx context.Context, f *flags, logf func(string, ...any)) error {
	d, format := l.d, l.lr.format
	o := load.Options{Addr: d.http, Format: format, Conns: l.lr.conns, NoBarrier: !l.lr.barrier, Preload: l.lr.preload, PID: d.pid()}
	batch := 1000 // telnet lines between barriers, remote_write series a request
	if format == gen.FormatTelnet {
		o.Addr = d.telnet
	}
	if format == gen.FormatInflux {
		batch = 100000 // 10,000 lines of ten fields
	}
	srcs, err := shards(f, format, batch, l.lr.conns)
	if err != nil {
		return err
	}
	daemon0, err := procstat.Read(d.pid())
	if err != nil {
		return err
	}
	l.cpu0 = daemon0.CPUSeconds
	res, err := load.RunSharded(ctx, o, srcs)
	if err != nil {
		return fmt.Errorf("%s %s load: %w\n%s", d.name, format, err, d.logs.String())
	}
	l.s = side{res: res, loaderCPU: res.LoaderCPUSeconds, points: res.Points}
	logf("%s %s (barrier %v): %d points, %.0f points/s, %d errors", d.name, format, l.lr.barrier, res.Points, res.PointsPerSecond(), res.Errors)
	if res.Errors > 0 {
		return fmt.Errorf("%s %s: %d errors, e.g. %v", d.name, format, res.Errors, res.ErrorSamples)
	}
	return nil
}

// settle brings the daemon's store to its settled size and records it,
// with the CPU the daemon spent from its load's start.
func (l *loaded) settle(logf func(string, ...any)) error {
	d := l.d
	if err := d.settle(); err != nil {
		return err
	}
	var err error
	if l.s.bytes, err = d.settledSize(); err != nil {
		return err
	}
	// tsd writes rows to its store after the flush grace and
	// VictoriaMetrics merges parts in the background: the CPU through
	// settling counts that work too.
	if daemon1, err := procstat.Read(d.pid()); err == nil {
		l.s.settleCPU = daemon1.CPUSeconds - l.cpu0
	}
	logf("%s settled: %d bytes allocated", d.name, l.s.bytes)
	return nil
}

// finish stops the daemon and sizes its directory; tsd's settled size is
// then the store compacted offline.
func (l *loaded) finish(ctx context.Context, logf func(string, ...any)) error {
	d := l.d
	d.stop()
	var err error
	if l.s.stopped, err = d.allocated(); err != nil {
		return err
	}
	if l.lr.which == "vm" {
		return nil
	}
	// A running tsd keeps the logs pebble recycles (up to three of 110 %
	// of the memtable size), which its next start drops; the settled
	// size is the store compacted offline and stopped.
	l.s.running = l.s.bytes
	if out, err := exec.CommandContext(ctx, l.lr.bin, "compact", "--data", l.lr.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("tsd compact --data %s: %w\n%s", l.lr.dir, err, out)
	}
	if l.s.bytes, err = d.allocated(); err != nil {
		return err
	}
	logf("tsd stopped: %d bytes allocated; compacted offline: %d", l.s.stopped, l.s.bytes)
	return nil
}

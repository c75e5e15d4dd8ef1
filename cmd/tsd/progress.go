package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress shows a long offline job's advance (tsd import, export, fsck,
// rollup rebuild) on stderr: a progressbar on a terminal, and on anything
// else (a log file, a pipe, a test) a plain line every
// progressPlainInterval and one at the end, so a log holds a readable
// record instead of redrawn bars.
type progress struct {
	opts    progressOptions
	bar     *progressbar.ProgressBar // nil when not a terminal
	w       io.Writer
	start   time.Time
	last    time.Time // last plain line
	done    int64
	count   int64
	barDesc string
}

// progressOptions say what a progress counts.
type progressOptions struct {
	desc  string // "import"
	total int64  // units of work, -1 when unknown
	bytes bool   // the units are bytes (show them as sizes)
	unit  string // the units' name when not bytes ("steps")
	// count names a second figure shown with its rate (points beside the
	// bytes read); empty for none.
	count string
}

// progressPlainInterval is the period of the plain lines.
var progressPlainInterval = 10 * time.Second

// newProgress starts a progress on w.
func newProgress(w io.Writer, o progressOptions) *progress {
	p := &progress{opts: o, w: w, start: time.Now()}
	p.last = p.start
	if !isTerminal(w) {
		return p
	}
	opts := []progressbar.Option{progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(o.desc),
		progressbar.OptionThrottle(100 * time.Millisecond), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true), progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) })}
	if o.bytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionSetItsString(o.unit), progressbar.OptionShowIts())
	}
	p.bar = progressbar.NewOptions64(o.total, opts...)
	return p
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// set records the work done and the count so far.
func (p *progress) set(done, count int64) {
	p.done, p.count = done, count
	now := time.Now()
	if p.bar != nil {
		if p.opts.count != "" {
			if d := fmt.Sprintf("%s: %d %s (%.0f/s)", p.opts.desc, count, p.opts.count, rate(count, now.Sub(p.start))); d != p.barDesc {
				p.barDesc = d
				p.bar.Describe(d)
			}
		}
		_ = p.bar.Set64(done)
		return
	}
	if now.Sub(p.last) >= progressPlainInterval {
		p.last = now
		fmt.Fprintln(p.w, p.line(now))
	}
}

// line is a plain progress line.
func (p *progress) line(now time.Time) string {
	el := now.Sub(p.start)
	s := p.opts.desc + ":"
	if p.opts.count != "" {
		s += fmt.Sprintf(" %d %s (%.0f %s/s),", p.count, p.opts.count, rate(p.count, el), p.opts.count)
	}
	if p.opts.bytes {
		s += " " + humanBytes(p.done)
		if p.opts.total > 0 {
			s += " of " + humanBytes(p.opts.total)
		}
	} else {
		s += fmt.Sprintf(" %d", p.done)
		if p.opts.total > 0 {
			s += fmt.Sprintf(" of %d", p.opts.total)
		}
		s += " " + p.opts.unit
	}
	if p.opts.total > 0 && p.done > 0 && p.done < p.opts.total {
		eta := time.Duration(float64(el) * float64(p.opts.total-p.done) / float64(p.done))
		s += ", ETA " + eta.Round(time.Second).String()
	}
	return s + ", elapsed " + el.Round(time.Millisecond).String()
}

// finish ends the bar, or prints the last plain line.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	fmt.Fprintln(p.w, p.line(time.Now()))
}

// rate is n per second over d.
func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// humanBytes formats a byte count for a progress line: "812 B", "1.5 MiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n)/unit, 0
	for f >= unit && u < 3 {
		f, u = f/unit, u+1
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGT"[u])
}

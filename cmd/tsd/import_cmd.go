package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/ingest/textimport"
)

// importUsage documents tsd import.
const importUsage = `Usage: tsd import [--config FILE] [--KEY=VALUE]... [--url URL | --data DIR] [--strict] FILE...

Loads points in OpenTSDB's import text format (tsdb import's), one a line:
  <metric> <timestamp> <value> [<tagk=tagv> ...]
the fields of a telnet put line without "put": timestamps in seconds or
milliseconds, integer or decimal values. Empty lines and lines starting with
'#' are skipped. A name holding a space or '=' is written with "\ " and "\="
("\\" for a backslash), as tsd export writes it. A FILE ending in .gz, or
starting with gzip's magic bytes, is decompressed; FILE - reads stdin.

Where the points go:
  --data DIR          a stopped store (tsd.storage.directory): the points go
                      through the daemon's own write path and its log, and
                      are flushed to the store before tsd import exits. The
                      daemon must be stopped: the store is locked while it runs.
  --url http://H:P    a running daemon, through POST /api/put in batches; a
                      503 answer is retried after its Retry-After.
  --url tcp://H:P     a running daemon, through telnet put lines; each batch
                      ends with a version command, whose answer means the
                      batch is on disk (names with a space or '=' cannot be
                      sent over telnet and are reported as bad lines).
Without either, --data's default store (tsd.storage.directory).

A bad line is reported on stderr as FILE:LINE: reason and skipped; with
--strict the first one stops the import (the batches before it stay).
Points a daemon refuses are reported with the lines of their batch.

Output: a progress bar on stderr (points, points/s, bytes, ETA; a plain line
every 10 s when stderr is not a terminal), then one line on stdout:
  imported P points from F files (B bytes) in D (R points/s), S lines skipped
Exit status: 0 every point imported, 3 some lines skipped, 1 the import
failed (a file or the target could not be read or written), 2 usage.

Flags:
  --url URL               send to the daemon at URL (http://, https:// or tcp://)
  --strict                stop at the first bad line
  --batch N               points per batch (default 5000)
  --user NAME, --password PASSWORD
                          credentials when access control is on (HTTP Basic;
                          telnet's auth basic line)
  --token TOKEN           an HTTP bearer token instead
  --help, -h              print this help
`

// exitSkipped is tsd import's status when lines were skipped.
const exitSkipped = 3

// importCmd is the parsed tsd import command line.
type importCmd struct {
	files    []string
	url      string
	strict   bool
	batch    int
	user     string
	password string
	token    string
	help     bool
}

// runImport is tsd import.
func runImport(args []string, stdout, stderr io.Writer) int {
	log, c := toolStart(stderr)
	ic, cl, err := parseImportArgs(args, c.isBoolFlag)
	if code, ok := toolUsage("tsd import", importUsage, err, ic.help, len(ic.files) == 0, stdout, stderr); !ok {
		return code
	}
	for _, f := range ic.files {
		if f == "-" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			fmt.Fprintf(stderr, "tsd import: %v\n", err)
			return exitFailed
		}
	}
	return runTool("tsd import", "tsd import", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		sink, err := ic.openSink(ctx, c, log, stderr)
		if err != nil {
			return exitFailed, err
		}
		return ic.run(ctx, c, sink, stdout, stderr)
	})
}

// parseImportArgs reads tsd import's flags and files.
func parseImportArgs(args []string, isBool func(string) bool) (importCmd, cmdline, error) {
	ic := importCmd{batch: 5000}
	rest, vals, set, err := takeFlags(args, []string{"url", "batch", "user", "password", "token"}, []string{"strict"})
	if err != nil {
		return ic, cmdline{}, err
	}
	ic.url, ic.user, ic.password, ic.token, ic.strict = strings.TrimRight(vals["url"], "/"), vals["user"], vals["password"], vals["token"], set["strict"]
	if b, ok := vals["batch"]; ok {
		if ic.batch, err = strconv.Atoi(b); err != nil || ic.batch < 1 {
			return ic, cmdline{}, fmt.Errorf("--batch %q: want a positive number of points", b)
		}
	}
	if ic.url != "" && !strings.HasPrefix(ic.url, "http://") && !strings.HasPrefix(ic.url, "https://") && !strings.HasPrefix(ic.url, "tcp://") {
		return ic, cmdline{}, fmt.Errorf("--url %q: want http://HOST:PORT or tcp://HOST:PORT", ic.url)
	}
	if (ic.user == "") != (ic.password == "") {
		return ic, cmdline{}, errors.New("--user and --password go together")
	}
	if ic.token != "" && ic.user != "" {
		return ic, cmdline{}, errors.New("--token or --user/--password: give one")
	}
	if ic.token != "" && strings.HasPrefix(ic.url, "tcp://") {
		return ic, cmdline{}, errors.New("--token is for HTTP: telnet authenticates with --user and --password")
	}
	var cl cmdline
	ic.files, ic.help, cl, err = parseToolArgs(rest, "import", isBool, func(string) (bool, error) { return false, nil })
	if err == nil && ic.url != "" && hasDataFlag(cl) {
		err = errors.New("--data and --url: give one")
	}
	return ic, cl, err
}

// hasDataFlag reports a --data (tsd.storage.directory) flag.
func hasDataFlag(cl cmdline) bool {
	for _, f := range cl.flags {
		if f.name == "data" || f.name == "tsd.storage.directory" {
			return true
		}
	}
	return false
}

// importSink is where imported points go: a batch is added point by
// point and sent by flush. A daemon's sinks send a batch in the background
// while the next one is parsed (one batch in flight), so a batch's outcome
// is reported at the next flush or at wait, through refused, with the
// batch's lines; every call, refused's included, is on the caller's
// goroutine.
type importSink interface {
	// add adds a point, parsed from the line text; an error is a point
	// the target cannot take (the bad line's reason).
	add(p *parse.Point, text []byte) error
	// flush sends the batch of lines from..to; its error may be an
	// earlier batch's.
	flush(ctx context.Context, from, to int, refused refusedFunc) error
	// wait returns once every batch flushed is acknowledged.
	wait(ctx context.Context, refused refusedFunc) error
	close(ctx context.Context) error
}

// refusedFunc reports n points of the batch of lines from..to that the
// target refused, and why (the first reason).
type refusedFunc func(from, to, n int, why string)

// importStats are the summary's counts.
type importStats struct {
	points, skipped, files, bytes int64
}

// run reads every file into sink, batch by batch.
func (ic *importCmd) run(ctx context.Context, c *config, sink importSink, stdout, stderr io.Writer) (code int, err error) {
	defer func() {
		if cerr := sink.close(context.Background()); cerr != nil && err == nil {
			code, err = exitFailed, cerr
		}
	}()
	var total int64 = -1
	if !contains(ic.files, "-") {
		total = 0
		for _, f := range ic.files {
			if st, err := os.Stat(f); err == nil {
				total += st.Size()
			}
		}
	}
	bar := newProgress(stderr, progressOptions{desc: "import", total: total, bytes: true, count: "points"})
	start := time.Now()
	var st importStats
	for _, f := range ic.files {
		if err := ic.importFile(ctx, c, f, sink, &st, bar, stderr); err != nil {
			bar.finish()
			return exitFailed, err
		}
		st.files++
	}
	bar.finish()
	el := time.Since(start)
	fmt.Fprintf(stdout, "imported %d points from %d files (%d bytes) in %s (%.0f points/s), %d lines skipped\n",
		st.points, st.files, st.bytes, el.Round(time.Millisecond), rate(st.points, el), st.skipped)
	if st.skipped > 0 {
		return exitSkipped, nil
	}
	return exitOK, nil
}

// importFile reads one file into sink.
func (ic *importCmd) importFile(ctx context.Context, c *config, name string, sink importSink, st *importStats, bar *progress, stderr io.Writer) error {
	var in io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	r, err := textimport.NewReader(in, &textimport.Options{MaxTags: c.maxTags, AllowSpecialChars: c.allowSpecialChars})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	base := st.bytes
	var pending int64
	first := 0 // the batch's first line
	refused := func(from, to, n int, why string) {
		st.skipped += int64(n)
		st.points -= int64(n)
		fmt.Fprintf(stderr, "%s:%d-%d: %d points refused: %s\n", name, from, to, n, why)
	}
	send := func() error {
		if pending == 0 {
			return nil
		}
		err := sink.flush(ctx, first, r.Line(), refused)
		st.points += pending
		pending, first = 0, 0
		bar.set(base+r.InputBytes(), st.points)
		return err
	}
	for r.Next() {
		bad := r.Bad()
		if bad == nil {
			if err := sink.add(r.Point(), r.Text()); err != nil {
				bad = &textimport.LineError{Line: r.Line(), Err: err}
			}
		}
		if bad != nil {
			st.skipped++
			var le *textimport.LineError
			if errors.As(bad, &le) {
				fmt.Fprintf(stderr, "%s:%d: %v\n", name, le.Line, le.Err)
			}
			if ic.strict {
				line := r.Line()
				if err := errors.Join(send(), sink.wait(ctx, refused)); err != nil {
					return err
				}
				return fmt.Errorf("%s:%d: bad line (--strict)", name, line)
			}
			continue
		}
		if first == 0 {
			first = r.Line()
		}
		if pending++; pending >= int64(ic.batch) {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if err := errors.Join(send(), sink.wait(ctx, refused)); err != nil {
		return err
	}
	bar.set(base+r.InputBytes(), st.points)
	st.bytes = base + r.InputBytes()
	if err := r.Err(); err != nil {
		return fmt.Errorf("%s: line %d: %w", name, r.Line(), err)
	}
	return nil
}

// openSink opens the target the flags name.
func (ic *importCmd) openSink(ctx context.Context, c *config, log *slog.Logger, stderr io.Writer) (importSink, error) {
	switch {
	case strings.HasPrefix(ic.url, "tcp://"):
		return dialTelnetSink(ctx, strings.TrimPrefix(ic.url, "tcp://"), ic.user, ic.password)
	case ic.url != "":
		return newHTTPSink(ic.url, ic.user, ic.password, ic.token), nil
	}
	return openStoreSink(ctx, c, log)
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsd-db/tsd/ingest/parse"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/query/export"
	"github.com/tsd-db/tsd/query/read"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// exportUsage documents tsd export.
const exportUsage = `Usage: tsd export [--config FILE] [--KEY=VALUE]... [--data DIR | --url URL] [--format=F] START [END] [METRIC[{FILTERS}]...]

Writes every point of the METRICs (default: every metric) with START <= time
<= END to stdout, one a line. METRIC{FILTERS} selects series as /api/query's
m= does: sys.cpu{host=web01}, sys.cpu{host=regexp(web.*),dc=literal_or(a|b)}.

Formats (--format):
  opentsdb    (default) tsdb import's text format, which tsd import reads:
              <metric> <timestamp> <value> <tagk=tagv>...; names with a
              space, '=' or backslash escaped as "\ ", "\=", "\\"; seconds
              when whole, else milliseconds; export then import gives back
              every series, timestamp and value (as a float64)
  prometheus  the text exposition format with ms timestamps, one
              "# TYPE NAME untyped" line per metric; names that are not
              Prometheus names are quoted: {"sys.cpu",host="web01"} 1 1356998400000
  influx      line protocol, ns timestamps: sys.cpu,host=web01 value=1 1356998400000000000
              (integers with the i suffix; NaN and infinities are skipped)

Where the points come from:
  --data DIR        a stopped store (tsd.storage.directory), read through the
                    daemon's reader, a bounded number of series and rows at
                    a time whatever the store's size. Points still only in the
                    write-ahead log of a daemon that was killed are not read:
                    start and stop the daemon once first, or use --url.
  --url http://H:P  a running daemon, through GET /api/query (aggregator
                    none, ms resolution), one request per metric and hour,
                    so each answer stays under the daemon's query limits
                    (tsd.query.max_output_points and the query timeout apply
                    to one metric-hour). Without METRIC the metrics come from
                    /api/suggest (at most 1,000,000).
Without either, --data's default store.

Times are tsd scan's: now, <N><unit>-ago, epoch seconds or ms, or
yyyy/MM/dd[-HH:mm[:ss]] in local time. END defaults to now.

Output: the points on stdout; on stderr a progress bar (metrics, points,
points/s; plain lines when not a terminal) and the summary:
  exported P points of S series in M metrics in D (R points/s)
Exit status: 0 done, 1 failed, 2 usage.

Flags:
  --format F              opentsdb, prometheus or influx
  --url URL               read from the daemon at URL
  --user NAME, --password PASSWORD, --token TOKEN
                          credentials when access control is on
  --help, -h              print this help
`

// exportCmd is the parsed tsd export command line.
type exportCmd struct {
	start, end int64 // ms
	specs      []string
	format     export.Format
	url        string
	user, pass string
	token      string
	help       bool
}

// runExport is tsd export.
func runExport(args []string, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c := newConfig()
	ec, cl, err := parseExportArgs(args, c.isBoolFlag, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "tsd export: %v\nRun 'tsd export --help' for usage.\n", err)
		return exitUsage
	}
	if ec.help {
		fmt.Fprint(stdout, exportUsage)
		return exitOK
	}
	return runTool("tsd export", "tsd export", c, cl, log, stderr, func(ctx context.Context) (int, error) {
		w := bufio.NewWriterSize(stdout, 256<<10)
		var st export.Stats
		var metrics int
		start := time.Now()
		var err error
		if ec.url != "" {
			metrics, err = ec.remote(ctx, w, &st, stderr)
		} else {
			metrics, err = ec.local(ctx, c, log, w, &st, stderr)
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		if err != nil {
			return exitFailed, err
		}
		el := time.Since(start)
		fmt.Fprintf(stderr, "exported %d points of %d series in %d metrics in %s (%.0f points/s)\n",
			st.Points, st.Series, metrics, el.Round(time.Millisecond), rate(st.Points, el))
		if st.Skipped > 0 {
			fmt.Fprintf(stderr, "tsd export: %d points (NaN or infinite) have no %s form and were skipped\n", st.Skipped, ec.format)
		}
		if err != nil {
			return exitFailed, err
		}
		return exitOK, nil
	})
}

// parseExportArgs reads tsd export's flags, times and metrics.
func parseExportArgs(args []string, isBool func(string) bool, now time.Time) (exportCmd, cmdline, error) {
	var ec exportCmd
	rest, vals, _, err := takeFlags(args, []string{"url", "format", "user", "password", "token"}, nil)
	if err != nil {
		return ec, cmdline{}, err
	}
	ec.url, ec.user, ec.pass, ec.token = strings.TrimRight(vals["url"], "/"), vals["user"], vals["password"], vals["token"]
	if ec.format, err = export.ParseFormat(vals["format"]); err != nil {
		return ec, cmdline{}, err
	}
	if ec.url != "" && !strings.HasPrefix(ec.url, "http://") && !strings.HasPrefix(ec.url, "https://") {
		return ec, cmdline{}, fmt.Errorf("--url %q: want http://HOST:PORT", ec.url)
	}
	var cl cmdline
	var pos []string
	pos, ec.help, cl, err = parseToolArgs(rest, "export", isBool, func(string) (bool, error) { return false, nil })
	if err != nil || ec.help {
		return ec, cl, err
	}
	if ec.url != "" && hasDataFlag(cl) {
		return ec, cl, errors.New("--data and --url: give one")
	}
	if len(pos) == 0 {
		return ec, cl, errors.New("missing START")
	}
	if ec.start, err = parseScanTime(pos[0], now); err != nil {
		return ec, cl, fmt.Errorf("start time: %w", err)
	}
	ec.end, pos = now.UnixMilli(), pos[1:]
	if len(pos) > 0 {
		if e, err := parseScanTime(pos[0], now); err == nil {
			ec.end, pos = e, pos[1:]
		}
	}
	if ec.end < ec.start {
		return ec, cl, fmt.Errorf("end time %d is before start time %d", ec.end, ec.start)
	}
	ec.specs = pos
	return ec, cl, nil
}

// local exports from a stopped store through query/read.
func (ec *exportCmd) local(ctx context.Context, c *config, log *slog.Logger, w io.Writer, st *export.Stats, stderr io.Writer) (int, error) {
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	u, s, err := openUIDTable(ctx, c, db, false, log)
	if err != nil {
		return 0, err
	}
	c.settings = s
	meta, err := db.Table(ctx, c.metaTable)
	if err != nil {
		return 0, fmt.Errorf("open the meta table (is %s a tsd store?): %w", c.dataDir, err)
	}
	ix, err := index.Open(ctx, meta, u, &index.Options{Widths: s.Widths})
	if err != nil {
		return 0, fmt.Errorf("open the series index: %w", err)
	}
	defer ix.Close()
	data, err := db.Table(ctx, c.dataTable)
	if err != nil {
		return 0, err
	}
	layout, err := c.layout()
	if err != nil {
		return 0, err
	}
	rules, err := retention.Parse(c.ingest.retention)
	if err != nil {
		return 0, fmt.Errorf("tsd.storage.retention: %w", err)
	}
	rd, err := read.New(&read.Options{Data: data, Layout: layout, UIDs: u, Retention: rules, Logger: log, RowCacheBytes: -1})
	if err != nil {
		return 0, err
	}
	ex, err := export.New(&export.Options{Reader: rd, Index: ix, UIDs: u, Format: ec.format})
	if err != nil {
		return 0, err
	}
	specs, err := ec.metricSpecs(ctx, func(fn func(string) error) error {
		return u.ForEach(ctx, uid.Metric, "", func(name string, _ uid.ID) error { return fn(name) })
	})
	if err != nil {
		return 0, err
	}
	bar := newProgress(stderr, progressOptions{desc: "export", total: int64(len(specs)), unit: "metrics", count: "points"})
	defer bar.finish()
	for i, spec := range specs {
		metric, filters, err := export.ParseSelector(ctx, u, spec)
		if err != nil {
			return i, err
		}
		ms, err := ex.Metric(ctx, w, metric, filters, ec.start, ec.end)
		st.Series, st.Points, st.Skipped = st.Series+ms.Series, st.Points+ms.Points, st.Skipped+ms.Skipped
		if err != nil {
			return i, err
		}
		bar.set(int64(i+1), st.Points)
	}
	return len(specs), nil
}

// metricSpecs returns the selectors asked for, or every metric's name.
func (ec *exportCmd) metricSpecs(ctx context.Context, all func(func(string) error) error) ([]string, error) {
	if len(ec.specs) > 0 {
		return ec.specs, nil
	}
	var names []string
	if err := all(func(n string) error { names = append(names, n); return nil }); err != nil {
		return nil, fmt.Errorf("list metrics: %w", err)
	}
	slices.Sort(names)
	return names, nil
}

// remote exports through a daemon's /api/query, a metric-hour at a time.
func (ec *exportCmd) remote(ctx context.Context, w io.Writer, st *export.Stats, stderr io.Writer) (int, error) {
	cl := &http.Client{Timeout: 10 * time.Minute}
	specs, err := ec.metricSpecs(ctx, func(fn func(string) error) error {
		var names []string
		if err := ec.getJSON(ctx, cl, "/api/suggest?type=metrics&max=1000000", &names); err != nil {
			return err
		}
		for _, n := range names {
			if err := fn(n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	bar := newProgress(stderr, progressOptions{desc: "export", total: int64(len(specs)), unit: "metrics", count: "points"})
	defer bar.finish()
	for i, spec := range specs {
		seen := map[string]bool{}
		header := false
		for from := ec.start; from <= ec.end; from = from/3600000*3600000 + 3600000 {
			to := min(ec.end, from/3600000*3600000+3599999)
			if err := ec.exportWindow(ctx, cl, w, spec, from, to, st, seen, &header); err != nil {
				return i, err
			}
			bar.set(int64(i), st.Points)
		}
		st.Series += int64(len(seen))
		bar.set(int64(i+1), st.Points)
	}
	return len(specs), nil
}

// queryAnswer is one series of /api/query's answer.
type queryAnswer struct {
	Metric string                 `json:"metric"`
	Tags   map[string]string      `json:"tags"`
	Dps    map[string]json.Number `json:"dps"`
}

// exportWindow writes one metric-hour.
func (ec *exportCmd) exportWindow(ctx context.Context, cl *http.Client, w io.Writer, spec string, from, to int64, st *export.Stats, seen map[string]bool, header *bool) error {
	q := url.Values{"start": {strconv.FormatInt(from, 10)}, "end": {strconv.FormatInt(to, 10)},
		"m": {"none:" + spec}, "ms": {"true"}}
	var ans []queryAnswer
	if err := ec.getJSON(ctx, cl, "/api/query?"+q.Encode(), &ans); err != nil {
		return err
	}
	var line []byte
	for _, s := range ans {
		if !*header {
			*header = true
			if _, err := w.Write(export.AppendHeader(nil, ec.format, s.Metric)); err != nil {
				return err
			}
		}
		tags := make([]export.Tag, 0, len(s.Tags))
		for k, v := range s.Tags {
			tags = append(tags, export.Tag{Key: k, Value: v})
		}
		slices.SortFunc(tags, func(a, b export.Tag) int { return strings.Compare(a.Key, b.Key) })
		key := s.Metric
		for _, t := range tags {
			key += "\x00" + t.Key + "\x00" + t.Value
		}
		seen[key] = true
		pts := make([]series.Point, 0, len(s.Dps))
		for ts, v := range s.Dps {
			t, err := strconv.ParseInt(ts, 10, 64)
			if err != nil {
				return fmt.Errorf("/api/query: timestamp %q: %w", ts, err)
			}
			p, err := parse.ParseOpenTSDBValue([]byte(v.String()))
			if err != nil && !errors.Is(err, parse.ErrNotFinite) {
				return fmt.Errorf("/api/query: value %q: %w", v, err)
			}
			p.T = t
			pts = append(pts, p)
		}
		slices.SortFunc(pts, func(a, b series.Point) int { return int(a.T - b.T) })
		n, skipped, err := export.WriteSeries(w, ec.format, s.Metric, tags, pts, line)
		st.Points, st.Skipped = st.Points+int64(n), st.Skipped+int64(skipped)
		if err != nil {
			return err
		}
	}
	return nil
}

// getJSON GETs path from the daemon and decodes its JSON answer.
func (ec *exportCmd) getJSON(ctx context.Context, cl *http.Client, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ec.url+path, nil)
	if err != nil {
		return err
	}
	switch {
	case ec.token != "":
		req.Header.Set("Authorization", "Bearer "+ec.token)
	case ec.user != "":
		req.SetBasicAuth(ec.user, ec.pass)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b)))
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	return dec.Decode(v)
}

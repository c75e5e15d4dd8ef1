package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tsd-db/tsd/bench/gen"
	"github.com/tsd-db/tsd/ingest/textimport"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	tsd, tsdload string
	hosts        int
	span         time.Duration
	batch        int
	dir          string
	keep         bool
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("tsdimport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.tsd, "tsd", "", "tsd binary (default: go build ./cmd/tsd)")
	fs.StringVar(&o.tsdload, "tsdload", "", "tsdload binary (default: go build ./bench/cmd/tsdload)")
	fs.IntVar(&o.hosts, "hosts", 100, "dataset hosts")
	fs.DurationVar(&o.span, "span", 24*time.Hour, "dataset span")
	fs.IntVar(&o.batch, "batch", 5000, "points per batch, for tsd import and tsdload alike")
	fs.StringVar(&o.dir, "dir", "", "work directory (default: a new temporary one)")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := o.run(stdout); err != nil {
		fmt.Fprintf(stderr, "tsdimport: %v\n", err)
		return 1
	}
	return 0
}

func (o *options) run(out io.Writer) error {
	if o.dir == "" {
		d, err := os.MkdirTemp("", "tsdimport")
		if err != nil {
			return err
		}
		o.dir = d
	}
	if !o.keep {
		defer os.RemoveAll(o.dir)
	}
	if err := o.build(); err != nil {
		return err
	}
	day := filepath.Join(o.dir, "day.txt")
	n, size, err := o.writeDay(day)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "tsdimport: devops %d hosts x %v: %d points, %d bytes of import text (%s)\n", o.hosts, o.span, n, size, time.Now().UTC().Format(time.RFC3339))
	var teleDir string
	for _, p := range []struct{ url, load string }{{"tcp", "telnet"}, {"http", "json"}} {
		dir := filepath.Join(o.dir, "import-"+p.load)
		imp, err := o.withDaemon(dir, func(addr string) (float64, error) {
			return o.tool(`\(([0-9.]+) points/s\)`, "import", "--url", p.url+"://"+addr, "--batch", strconv.Itoa(o.batch), day)
		})
		if err != nil {
			return fmt.Errorf("tsd import --url %s: %w", p.url, err)
		}
		load, err := o.withDaemon(filepath.Join(o.dir, "load-"+p.load), func(addr string) (float64, error) {
			return o.loadRate(addr, p.load)
		})
		if err != nil {
			return fmt.Errorf("tsdload -proto %s: %w", p.load, err)
		}
		fmt.Fprintf(out, "import over %s, 1 connection, batch %d: tsd import %.0f points/s, tsdload %.0f points/s, ratio %.2f\n",
			p.load, o.batch, imp, load, imp/load)
		if p.load == "telnet" {
			teleDir = dir
		}
	}
	exp1 := filepath.Join(o.dir, "export1.txt")
	rate, err := o.export(teleDir, exp1)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "tsd export --data (stopped store, opentsdb text to a file): %.0f points/s\n", rate)
	fresh := filepath.Join(o.dir, "fresh")
	irate, err := o.tool(`\(([0-9.]+) points/s\)`, "import", "--data", fresh, exp1)
	if err != nil {
		return fmt.Errorf("tsd import --data: %w", err)
	}
	exp2 := filepath.Join(o.dir, "export2.txt")
	if _, err := o.export(fresh, exp2); err != nil {
		return err
	}
	fmt.Fprintf(out, "tsd import --data (fresh store, from the export): %.0f points/s\n", irate)
	return verify(out, day, exp1, exp2)
}

// build makes the binaries not given.
func (o *options) build() error {
	for _, b := range []struct {
		path *string
		pkg  string
	}{{&o.tsd, "./cmd/tsd"}, {&o.tsdload, "./bench/cmd/tsdload"}} {
		if *b.path != "" {
			continue
		}
		*b.path = filepath.Join(o.dir, filepath.Base(b.pkg))
		cmd := exec.Command("go", "build", "-o", *b.path, b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return nil
}

// writeDay writes the dataset as import lines (telnet put lines without
// "put ").
func (o *options) writeDay(path string) (n, size int64, err error) {
	g, err := gen.New(gen.Config{Hosts: o.hosts, Span: o.span})
	if err != nil {
		return 0, 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var p gen.Point
	var buf []byte
	for g.Next(&p) {
		buf = g.AppendPut(buf[:0], &p)
		w.Write(bytes.TrimPrefix(buf, []byte("put ")))
		n++
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, 0, err
	}
	st, _ := f.Stat()
	return n, st.Size(), f.Close()
}

// withDaemon runs fn against a daemon on a fresh directory dir, then
// stops the daemon (its final flush included).
func (o *options) withDaemon(dir string, fn func(addr string) (float64, error)) (float64, error) {
	cmd := exec.Command(o.tsd, "--port=0", "--tsd.network.bind=127.0.0.1", "--data", dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	addrc := make(chan string, 1)
	var logs bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		re := regexp.MustCompile(`listening on ([^" ]+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		cmd.Wait()
		return 0, fmt.Errorf("tsd did not start:\n%s", logs.String())
	}
	rate, ferr := fn(addr)
	cmd.Process.Signal(syscall.SIGTERM)
	<-done
	werr := cmd.Wait()
	if ferr == nil && werr != nil {
		ferr = fmt.Errorf("tsd exited with %v:\n%s", werr, logs.String())
	}
	return rate, ferr
}

// tool runs tsd with args and returns the rate its summary line gives.
func (o *options) tool(rateRE string, args ...string) (float64, error) {
	cmd := exec.Command(o.tsd, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%v\n%s%s", err, so.String(), tail(se.String()))
	}
	return findRate(rateRE, so.String()+se.String())
}

// export runs tsd export --data dir over the dataset's span into file.
func (o *options) export(dir, file string) (float64, error) {
	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := gen.DefaultStart.Unix()
	cmd := exec.Command(o.tsd, "export", "--data", dir, strconv.FormatInt(start, 10), strconv.FormatInt(start+int64(o.span/time.Second)-1, 10))
	var se bytes.Buffer
	cmd.Stdout, cmd.Stderr = bufio.NewWriterSize(f, 1<<20), &se
	w := cmd.Stdout.(*bufio.Writer)
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("tsd export: %v\n%s", err, tail(se.String()))
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return findRate(`\(([0-9.]+) points/s\)`, se.String())
}

// loadRate runs tsdload over proto with one connection and the batch.
func (o *options) loadRate(addr, proto string) (float64, error) {
	cmd := exec.Command(o.tsdload, "-addr", addr, "-proto", proto, "-conns", "1", "-batch", strconv.Itoa(o.batch),
		"-hosts", strconv.Itoa(o.hosts), "-span", o.span.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v\n%s", err, out)
	}
	if strings.Contains(string(out), "requests:") && !strings.Contains(string(out), " 0 errors") {
		return 0, fmt.Errorf("tsdload had errors:\n%s", out)
	}
	return findRate(`points/s: ([0-9.]+)`, string(out))
}

func findRate(re, s string) (float64, error) {
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("no rate in %q", tail(s))
	}
	return strconv.ParseFloat(m[1], 64)
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// digest is a multiset fingerprint of points.
type digest struct {
	n, sum, sq uint64
}

// verify checks that the three files hold the same points.
func verify(out io.Writer, files ...string) error {
	seed := maphash.MakeSeed()
	var ds []digest
	for _, f := range files {
		d, err := fingerprint(seed, f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		ds = append(ds, d)
	}
	for i, d := range ds[1:] {
		if d != ds[0] {
			return fmt.Errorf("round trip: %s holds %d points (digest %x/%x), %s %d (%x/%x)",
				files[0], ds[0].n, ds[0].sum, ds[0].sq, files[i+1], d.n, d.sum, d.sq)
		}
	}
	fmt.Fprintf(out, "round trip: the dataset, its export and the export of the store imported from it hold the same %d points (series, timestamps, float64 values): ok\n", ds[0].n)
	return nil
}

// fingerprint reads an import file into a digest of its points.
func fingerprint(seed maphash.Seed, path string) (digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return digest{}, err
	}
	defer f.Close()
	r, err := textimport.NewReader(f, nil)
	if err != nil {
		return digest{}, err
	}
	var d digest
	var h maphash.Hash
	h.SetSeed(seed)
	var tags []string
	var b [8]byte
	for r.Next() {
		if err := r.Bad(); err != nil {
			return d, err
		}
		p := r.Point()
		h.Reset()
		h.Write(p.Metric)
		tags = tags[:0]
		for _, t := range p.Tags {
			tags = append(tags, string(t.Key)+"="+string(t.Value))
		}
		slices.Sort(tags)
		for _, t := range tags {
			h.WriteByte(0)
			h.WriteString(t)
		}
		h.WriteByte(1)
		putUint64(b[:], uint64(p.Value.T))
		h.Write(b[:])
		putUint64(b[:], math.Float64bits(p.Value.Float()))
		h.Write(b[:])
		x := h.Sum64()
		d.n++
		d.sum += x
		d.sq += x * x
	}
	if r.Err() != nil {
		return d, r.Err()
	}
	if d.n == 0 {
		return d, errors.New("no points")
	}
	return d, nil
}

func putUint64(b []byte, v uint64) {
	for i := 7; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

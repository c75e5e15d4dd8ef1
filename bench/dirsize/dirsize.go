package dirsize

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Report is a directory's on-disk size by class.
type Report struct {
	// Dir is the measured directory; Kind its layout.
	Dir, Kind string
	// Data, Index, WAL and Other are bytes by class; they sum to Total.
	Data, Index, WAL, Other int64
	// Total is the bytes of every regular file under Dir.
	Total int64
	// Files is the number of regular files.
	Files int
	// Points is the number of points stored, 0 when unknown.
	Points uint64
	// Note says how the classes were obtained when it is not exact.
	Note string
}

// classify maps a relative path to a class; it returns "" to skip.
type classify func(rel string) string

func walk(dir string, class classify) (Report, error) {
	r := Report{Dir: dir}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			var info fs.FileInfo
			if info, err = d.Info(); err == nil {
				rel, _ := filepath.Rel(dir, path)
				r.add(class(filepath.ToSlash(rel)), info.Size())
			}
		}
		// A file listed and gone before its size was read was being
		// removed: pebble deletes the sstables a compaction replaced in
		// the background, after Compact returns.
		if errors.Is(err, fs.ErrNotExist) && path != dir {
			return nil
		}
		return err
	})
	if err != nil {
		return r, fmt.Errorf("measure %s: %w", dir, err)
	}
	return r, nil
}

func (r *Report) add(class string, n int64) {
	switch class {
	case "data":
		r.Data += n
	case "index":
		r.Index += n
	case "wal":
		r.WAL += n
	default:
		r.Other += n
	}
	r.Total += n
	r.Files++
}

// Prometheus measures a Prometheus data directory or a single block.
func Prometheus(dir string) (Report, error) {
	r, err := walk(dir, func(rel string) string {
		parts := strings.Split(rel, "/")
		base := parts[len(parts)-1]
		switch {
		case has(parts, "wal") || has(parts, "wbl"):
			return "wal"
		case len(parts) > 1 && (parts[len(parts)-2] == "chunks" || parts[len(parts)-2] == "chunks_head"):
			return "data"
		case base == "index":
			return "index"
		}
		return "other"
	})
	r.Kind = "prometheus"
	if err != nil {
		return r, err
	}
	r.Points, err = promSamples(dir)
	return r, err
}

func has(parts []string, s string) bool {
	for _, p := range parts[:len(parts)-1] {
		if p == s {
			return true
		}
	}
	return false
}

// promSamples sums numSamples over the meta.json files under dir.
func promSamples(dir string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "meta.json" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var m struct {
			Stats struct {
				NumSamples uint64 `json:"numSamples"`
			} `json:"stats"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		n += m.Stats.NumSamples
		return nil
	})
	return n, err
}

// Pebble measures a Pebble directory.
func Pebble(dir string) (Report, error) {
	r, err := walk(dir, pebbleClass)
	r.Kind = "pebble"
	return r, err
}

func pebbleClass(rel string) string {
	switch {
	case strings.HasSuffix(rel, ".sst"):
		return "data"
	case strings.HasSuffix(rel, ".log"):
		return "wal"
	}
	return "other"
}

// PerPoint returns bytes per point, or 0 when Points is unknown.
func (r Report) PerPoint(bytes int64) float64 {
	if r.Points == 0 {
		return 0
	}
	return float64(bytes) / float64(r.Points)
}

// Write prints the report as a small Markdown table.
func (r Report) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s directory %s: %d files, %d points\n\n", r.Kind, r.Dir, r.Files, r.Points)
	fmt.Fprintf(&b, "| class | bytes | bytes/point |\n| ----- | ----- | ----------- |\n")
	for _, c := range []struct {
		name string
		n    int64
	}{{"data", r.Data}, {"index", r.Index}, {"data+index", r.Data + r.Index}, {"log", r.WAL}, {"other", r.Other}, {"total", r.Total}} {
		fmt.Fprintf(&b, "| %s | %d | %s |\n", c.name, c.n, perPointText(r, c.n))
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", r.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func perPointText(r Report, n int64) string {
	if r.Points == 0 {
		return "?"
	}
	return fmt.Sprintf("%.3f", r.PerPoint(n))
}

package uid

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// DefaultSuggestMax is OpenTSDB's MAX_SUGGESTIONS.
const DefaultSuggestMax = 25

// Suggest returns up to max names of kind that start with prefix, in byte
// order of their stored form (code point order in both formats). An empty
// prefix lists the kind from the start, UTF-8 names included, where
// OpenTSDB scans only `!`..`~`. max <= 0 means DefaultSuggestMax.
func (u *UIDs) Suggest(ctx context.Context, kind Kind, prefix string, max int) ([]string, error) {
	if max <= 0 {
		max = DefaultSuggestMax
	}
	var out []string
	err := u.ForEach(ctx, kind, prefix, func(name string, _ ID) error {
		out = append(out, name)
		if len(out) >= max {
			return errStop
		}
		return nil
	})
	return out, err
}

// errStop ends a ForEach early without an error.
var errStop = fmt.Errorf("stop")

// ForEach calls fn for every forward map of kind whose name starts with
// prefix, in byte order of the stored names. A forward value of the wrong
// width is a *storage.CorruptionError. fn's error stops the walk and is
// returned.
func (u *UIDs) ForEach(ctx context.Context, kind Kind, prefix string, fn func(name string, id ID) error) error {
	if !kind.Valid() {
		return fmt.Errorf("uid scan: invalid kind %d", kind)
	}
	start, err := EncodeName(u.opts.Format, nil, []byte(prefix))
	if err != nil {
		return err
	}
	opts := &storage.ScanOptions{Start: start, Stop: prefixEnd(start), ReadOptions: *forwardRead[kind]}
	sc := u.tbl.Scan(ctx, opts)
	defer sc.Close()
	w := u.kinds[kind].width
	var buf []byte
	for sc.Next() {
		row := sc.Row()
		if bytes.Equal(row.Key, MaxIDRow) {
			continue
		}
		for _, c := range row.Cells {
			id, err := parseExactID(c.Value, w)
			if err != nil {
				return &storage.CorruptionError{Table: u.tbl.Spec().Name, Row: bytes.Clone(c.Row), Qualifier: kindQuals[kind], Err: err}
			}
			buf = DecodeName(u.opts.Format, buf[:0], c.Row)
			if err := fn(string(buf), id); err != nil {
				if err == errStop {
					return nil
				}
				return err
			}
		}
	}
	return sc.Err()
}

// prefixEnd returns the first key after every key starting with p, or nil
// when there is none (p empty or all 0xFF).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

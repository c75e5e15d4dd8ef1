package bigtable

import (
	"math"
	"time"

	bt "cloud.google.com/go/bigtable"

	"github.com/tsd-db/tsd/storage"
)

// readFilter builds the server-side filter for a read: per family, the
// selected columns, then the family's own limits (MaxVersions, then TTL
// against now), then the read's time range and MaxVersions. Families are
// disjoint branches of an interleave, so no cell comes back twice. A nil
// filter reads everything.
func readFilter(spec storage.TableSpec, o *storage.ReadOptions, nowMicros int64) bt.Filter {
	var ro storage.ReadOptions
	if o != nil {
		ro = *o
	}
	if readsAll(spec, &ro) {
		return nil
	}
	var branches []bt.Filter
	for _, f := range selectedFamilies(spec, ro.Families) {
		if b := familyFilter(f, &ro, nowMicros); b != nil {
			branches = append(branches, b)
		}
	}
	return interleave(branches)
}

// readsAll reports that neither the read nor any family limits anything.
func readsAll(spec storage.TableSpec, ro *storage.ReadOptions) bool {
	if len(ro.Families) > 0 || ro.Qualifiers != nil || ro.QualifierPrefix != nil ||
		ro.QualifierStart != nil || ro.QualifierStop != nil ||
		ro.MinTime != 0 || ro.MaxTime != 0 || ro.MaxVersions != 0 {
		return false
	}
	for _, f := range spec.Families {
		if f.MaxVersions > 0 || f.TTL > 0 {
			return false
		}
	}
	return true
}

// selectedFamilies returns the families a read names (each once), or all.
func selectedFamilies(spec storage.TableSpec, names []string) []storage.FamilySpec {
	if len(names) == 0 {
		return spec.Families
	}
	var out []storage.FamilySpec
	for _, f := range spec.Families {
		for _, n := range names {
			if n == f.Name {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// familyFilter is one family's branch, or nil when it cannot match.
func familyFilter(f storage.FamilySpec, ro *storage.ReadOptions, nowMicros int64) bt.Filter {
	cols, ok := columnFilter(f.Name, ro)
	if !ok {
		return nil
	}
	chain := []bt.Filter{cols}
	if f.MaxVersions > 0 {
		chain = append(chain, bt.LatestNFilter(f.MaxVersions))
	}
	if f.TTL > 0 {
		chain = append(chain, bt.TimestampRangeFilterMicros(bt.Timestamp(ttlCutoff(nowMicros, f.TTL)), 0))
	}
	if ro.MinTime != 0 || ro.MaxTime != 0 {
		lo, hi := ceilMilli(ro.MinTime), ceilMilli(ro.MaxTime)
		if ro.MaxTime != 0 && hi <= lo {
			return nil
		}
		chain = append(chain, bt.TimestampRangeFilterMicros(bt.Timestamp(lo), bt.Timestamp(hi)))
	}
	if ro.MaxVersions > 0 {
		chain = append(chain, bt.LatestNFilter(ro.MaxVersions))
	}
	return chainOf(chain)
}

// columnFilter selects the family's columns the read asks for; ok is false
// when no column can match.
func columnFilter(family string, ro *storage.ReadOptions) (bt.Filter, bool) {
	chain := []bt.Filter{bt.ColumnRangeFilter(family, "", "")}
	if ro.QualifierPrefix != nil {
		p := string(ro.QualifierPrefix)
		chain = append(chain, bt.ColumnRangeFilter(family, p, prefixEnd(p)))
	}
	if ro.QualifierStart != nil || ro.QualifierStop != nil {
		if ro.QualifierStop != nil && len(ro.QualifierStop) == 0 {
			return nil, false // [x, "") is empty; the client would read "" as unbounded
		}
		chain = append(chain, bt.ColumnRangeFilter(family, string(ro.QualifierStart), string(ro.QualifierStop)))
	}
	if ro.Qualifiers != nil {
		exact := exactColumns(family, ro.Qualifiers)
		if exact == nil {
			return nil, false
		}
		chain = append(chain, exact)
	}
	if len(chain) > 1 {
		chain = chain[1:] // every later range already names the family
	}
	return chainOf(chain), true
}

// exactColumns matches each listed qualifier exactly, as the column range
// [q, q+"\x00"): no regular expression, so any byte is safe. Duplicates are
// dropped because an interleave would return their cells twice.
func exactColumns(family string, qs [][]byte) bt.Filter {
	seen := make(map[string]bool, len(qs))
	var fs []bt.Filter
	for _, q := range qs {
		if seen[string(q)] {
			continue
		}
		seen[string(q)] = true
		fs = append(fs, bt.ColumnRangeFilter(family, string(q), string(q)+"\x00"))
	}
	if len(fs) == 0 {
		return nil
	}
	return interleave(fs)
}

// chainOf chains filters; the server rejects a chain of fewer than two.
func chainOf(fs []bt.Filter) bt.Filter {
	switch len(fs) {
	case 0:
		return bt.PassAllFilter()
	case 1:
		return fs[0]
	}
	return bt.ChainFilters(fs...)
}

// interleave unions filters; the server rejects an interleave of fewer than
// two, and nothing to union matches nothing.
func interleave(fs []bt.Filter) bt.Filter {
	switch len(fs) {
	case 0:
		return bt.BlockAllFilter()
	case 1:
		return fs[0]
	}
	return bt.InterleaveFilters(fs...)
}

// prefixEnd is the first string after every string starting with p, or ""
// (unbounded) when there is none.
func prefixEnd(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}

// ceilMilli rounds a microsecond bound up to a whole millisecond. Cells are
// whole milliseconds, so [ceil(a), ceil(b)) holds exactly the cells of
// [a, b), and Bigtable only accepts millisecond bounds.
func ceilMilli(us int64) int64 {
	if us <= 0 {
		return 0
	}
	if us > math.MaxInt64-999 {
		return math.MaxInt64 - math.MaxInt64%1000
	}
	return (us + 999) / 1000 * 1000
}

// ttlCutoff is the oldest timestamp still alive at now (microseconds at
// whole milliseconds, as cells are stamped): a cell lives while
// ts > now - ttl, so the cutoff is the next whole millisecond above it.
func ttlCutoff(nowMicros int64, ttl time.Duration) int64 {
	x := nowMicros - ttl.Microseconds()
	if x < 0 {
		return 0
	}
	return ceilMilli(x + 1)
}

package pebble

import (
	"bytes"
	"sync"

	"github.com/tsd-db/tsd/storage"
	"rsc.io/binaryregexp"
)

// filter holds a read's cell filters in the form the scan loop tests.
type filter struct {
	famMask     []bool // by tableState.fams index; nil allows all
	qualifiers  [][]byte
	qualPrefix  []byte
	qualStart   []byte
	qualStop    []byte
	minT, maxT  int64
	maxVersions int
	now         int64
	// hasColumn and hasVersion say whether column and version can reject
	// anything, so a plain scan skips them.
	hasColumn, hasVersion bool
	// limitOnly says families' MaxVersions are the only version filter
	// (no TTL, no time range, no read version limit).
	limitOnly bool
	// plain says the families' version limits are the only filter.
	plain bool
}

// reset fills f from o (nil: no filters), reusing f's mask.
func (f *filter) reset(st *tableState, o *storage.ReadOptions, now int64) {
	f.set(st, o, now)
	f.hasColumn = f.famMask != nil || f.qualifiers != nil || f.qualPrefix != nil ||
		f.qualStart != nil || f.qualStop != nil
	f.limitOnly = f.minT == 0 && f.maxT == 0 && f.maxVersions == 0 && !st.hasTTL()
	f.hasVersion = !f.limitOnly || st.hasVersionLimit()
	f.plain = f.limitOnly && !f.hasColumn
}

func (f *filter) set(st *tableState, o *storage.ReadOptions, now int64) {
	mask := f.famMask[:0]
	*f = filter{now: now}
	if o == nil {
		return
	}
	if o.Families != nil {
		for range st.fams {
			mask = append(mask, false)
		}
		for _, name := range o.Families {
			if i := st.familyIndex(name); i >= 0 {
				mask[i] = true
			}
		}
		f.famMask = mask
	}
	f.qualifiers, f.qualPrefix = o.Qualifiers, o.QualifierPrefix
	f.qualStart, f.qualStop = o.QualifierStart, o.QualifierStop
	f.minT, f.maxT, f.maxVersions = o.MinTime, o.MaxTime, o.MaxVersions
}

// column reports whether a column passes the family and qualifier filters.
func (f *filter) column(fam int, q []byte) bool {
	if f.famMask != nil && !f.famMask[fam] {
		return false
	}
	if f.qualifiers != nil && !containsBytes(f.qualifiers, q) {
		return false
	}
	if f.qualPrefix != nil && !bytes.HasPrefix(q, f.qualPrefix) {
		return false
	}
	if f.qualStart != nil && bytes.Compare(q, f.qualStart) < 0 {
		return false
	}
	return f.qualStop == nil || bytes.Compare(q, f.qualStop) < 0
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

// version reports whether the v-th newest stored version (counting from 0)
// of a column, with timestamp ts, of which emitted were already returned, is
// visible: the family keeps it (MaxVersions, TTL) and the read wants it.
func (f *filter) version(fi *famInfo, v, emitted int, ts int64) bool {
	if fi.maxVersions > 0 && v >= fi.maxVersions {
		return false
	}
	if expired(*fi, ts, f.now) {
		return false
	}
	if ts < f.minT || (f.maxT > 0 && ts >= f.maxT) {
		return false
	}
	return f.maxVersions == 0 || emitted < f.maxVersions
}

// regexCache keeps compiled row regexes; Regexp is safe for concurrent use.
var regexCache struct {
	sync.Mutex
	m map[string]*binaryregexp.Regexp
}

const maxCachedRegexes = 256

// compileRowRegex compiles expr to match whole row keys as raw bytes.
func compileRowRegex(expr string) (*binaryregexp.Regexp, error) {
	regexCache.Lock()
	re := regexCache.m[expr]
	regexCache.Unlock()
	if re != nil {
		return re, nil
	}
	// Compiling expr alone first rejects inputs such as "a)|(b" that would
	// escape the anchoring group.
	pattern := latin1(expr)
	_, err := binaryregexp.Compile(pattern)
	if err == nil {
		re, err = binaryregexp.Compile(`(?s)^(?:` + pattern + `)$`)
	}
	if err != nil {
		return nil, storage.Invalidf("row regex %q: %v", expr, err)
	}
	regexCache.Lock()
	if regexCache.m == nil || len(regexCache.m) >= maxCachedRegexes {
		regexCache.m = make(map[string]*binaryregexp.Regexp)
	}
	regexCache.m[expr] = re
	regexCache.Unlock()
	return re, nil
}

// latin1 reads s as Latin-1, byte b being rune b, and returns it as UTF-8:
// binaryregexp parses patterns as UTF-8 but matches input bytes as Latin-1,
// so a pattern byte 0xC3 must become rune U+00C3 to match key byte 0xC3.
func latin1(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		ascii = ascii && s[i] < 0x80
	}
	if ascii {
		return s
	}
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return string(r)
}

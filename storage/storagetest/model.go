package storagetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// model is one table of the in-memory reference: storage/doc.go executed as
// plainly as possible, with no concern for speed. Versions of a column are
// kept newest first, one per timestamp, and every version is kept
// physically: MaxVersions and TTL are applied only when reading, which is the
// view an engine with lazy garbage collection must give. A model is not safe
// for concurrent use.
type model struct {
	spec storage.TableSpec
	rows map[string]modelRow
	now  func() time.Time
}

// modelRow maps family to qualifier to versions, newest first.
type modelRow map[string]map[string][]modelVersion

// modelVersion is one timestamped value of a column.
type modelVersion struct {
	ts    int64
	value []byte
}

func newModel(spec storage.TableSpec, now func() time.Time) *model {
	return &model{spec: cloneSpec(spec), rows: make(map[string]modelRow), now: now}
}

// nowMicros is the model's clock at millisecond granularity, as engines
// stamp zero timestamps.
func (m *model) nowMicros() int64 {
	us := m.now().UnixMicro()
	return us - us%1000
}

func (m *model) put(row []byte, cells []storage.Cell) error {
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	if err := storage.ValidateCells(m.spec, cells); err != nil {
		return err
	}
	m.write(row, cells)
	return nil
}

// write stores already validated cells, stamping zero timestamps once so a
// Put's cells share one time.
func (m *model) write(row []byte, cells []storage.Cell) {
	now := m.nowMicros()
	for _, c := range cells {
		ts := c.Timestamp
		if ts == 0 {
			ts = now
		}
		m.set(row, c.Family, c.Qualifier, ts, c.Value)
	}
}

// set writes one version; an equal timestamp overwrites (later write wins).
func (m *model) set(row []byte, family string, qualifier []byte, ts int64, value []byte) {
	r := m.rows[string(row)]
	if r == nil {
		r = make(modelRow)
		m.rows[string(row)] = r
	}
	f := r[family]
	if f == nil {
		f = make(map[string][]modelVersion)
		r[family] = f
	}
	vs := f[string(qualifier)]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].ts <= ts })
	v := modelVersion{ts: ts, value: bytes.Clone(value)}
	if i < len(vs) && vs[i].ts == ts {
		vs[i] = v
	} else {
		vs = slices.Insert(vs, i, v)
	}
	f[string(qualifier)] = vs
}

func (m *model) validateDeletions(row []byte, dels []storage.Deletion) error {
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	for _, d := range dels {
		if err := storage.ValidateDeletion(m.spec, d); err != nil {
			return err
		}
	}
	return nil
}

func (m *model) delete(row []byte, dels []storage.Deletion) error {
	if err := m.validateDeletions(row, dels); err != nil {
		return err
	}
	m.remove(row, dels)
	return nil
}

// remove applies validated deletions; none means the whole row.
func (m *model) remove(row []byte, dels []storage.Deletion) {
	if len(dels) == 0 {
		delete(m.rows, string(row))
		return
	}
	for _, d := range dels {
		m.removeOne(string(row), d)
	}
	m.prune(string(row))
}

func (m *model) removeOne(row string, d storage.Deletion) {
	r := m.rows[row]
	if r == nil {
		return
	}
	switch d.Kind {
	case storage.DeleteRow:
		delete(m.rows, row)
	case storage.DeleteFamily:
		for q, vs := range r[d.Family] {
			r[d.Family][q] = dropRange(vs, d.MinTime, d.MaxTime)
		}
	case storage.DeleteColumn:
		if f := r[d.Family]; f != nil {
			f[string(d.Qualifier)] = dropRange(f[string(d.Qualifier)], d.MinTime, d.MaxTime)
		}
	}
}

// prune drops empty columns, families and the row itself.
func (m *model) prune(row string) {
	r := m.rows[row]
	for fam, f := range r {
		for q, vs := range f {
			if len(vs) == 0 {
				delete(f, q)
			}
		}
		if len(f) == 0 {
			delete(r, fam)
		}
	}
	if r != nil && len(r) == 0 {
		delete(m.rows, row)
	}
}

// inRange reports whether ts is in [min, max); a zero max is unbounded.
func inRange(ts, min, max int64) bool {
	return ts >= min && (max == 0 || ts < max)
}

func dropRange(vs []modelVersion, min, max int64) []modelVersion {
	return slices.DeleteFunc(vs, func(v modelVersion) bool { return inRange(v.ts, min, max) })
}

func (m *model) deleteRange(start, stop []byte) {
	for k := range m.rows {
		if k >= string(start) && (stop == nil || k < string(stop)) {
			delete(m.rows, k)
		}
	}
}

func (m *model) validateMutations(muts []storage.Mutation) error {
	for i, mu := range muts {
		if err := m.validateDeletions(mu.Row, mu.Deletes); err != nil {
			return fmt.Errorf("mutation %d: %w", i, err)
		}
		if err := storage.ValidateCells(m.spec, mu.Cells); err != nil {
			return fmt.Errorf("mutation %d: %w", i, err)
		}
	}
	return nil
}

// apply checks every mutation before applying any, one of the outcomes the
// contract allows for a failing batch.
func (m *model) apply(muts []storage.Mutation) error {
	if err := m.validateMutations(muts); err != nil {
		return err
	}
	for _, mu := range muts {
		if len(mu.Deletes) > 0 {
			m.remove(mu.Row, mu.Deletes)
		}
		m.write(mu.Row, mu.Cells)
	}
	return nil
}

// visible applies the family's own limits, as if garbage collection had
// just run: the newest MaxVersions versions, minus those older than TTL.
func visible(spec storage.FamilySpec, vs []modelVersion, now int64) []modelVersion {
	if spec.MaxVersions > 0 && len(vs) > spec.MaxVersions {
		vs = vs[:spec.MaxVersions]
	}
	if spec.TTL > 0 {
		cutoff := now - spec.TTL.Microseconds()
		n := 0
		for n < len(vs) && vs[n].ts > cutoff {
			n++
		}
		vs = vs[:n]
	}
	return vs
}

// newest returns the newest visible version of a column.
func (m *model) newest(row []byte, family string, qualifier []byte) (modelVersion, bool) {
	spec, _ := m.spec.Family(family)
	vs := visible(spec, m.rows[string(row)][family][string(qualifier)], m.nowMicros())
	if len(vs) == 0 {
		return modelVersion{}, false
	}
	return vs[0], true
}

// read returns the cells of a row that pass o, in storage order.
func (m *model) read(row string, o *storage.ReadOptions, now int64) []storage.Cell {
	r := m.rows[row]
	var out []storage.Cell
	for _, fam := range sortedKeys(r) {
		if !familySelected(o, fam) {
			continue
		}
		spec, _ := m.spec.Family(fam)
		for _, q := range sortedKeys(r[fam]) {
			if !qualifierSelected(o, []byte(q)) {
				continue
			}
			out = appendVersions(out, row, fam, q, visible(spec, r[fam][q], now), o)
		}
	}
	return out
}

func appendVersions(out []storage.Cell, row, fam, q string, vs []modelVersion, o *storage.ReadOptions) []storage.Cell {
	n := 0
	for _, v := range vs {
		if o != nil && !inRange(v.ts, o.MinTime, o.MaxTime) {
			continue
		}
		if o != nil && o.MaxVersions > 0 && n == o.MaxVersions {
			break
		}
		n++
		out = append(out, storage.Cell{
			Row: []byte(row), Family: fam, Qualifier: []byte(q),
			Timestamp: v.ts, Value: bytes.Clone(v.value),
		})
	}
	return out
}

func familySelected(o *storage.ReadOptions, fam string) bool {
	return o == nil || o.Families == nil || slices.Contains(o.Families, fam)
}

func qualifierSelected(o *storage.ReadOptions, q []byte) bool {
	if o == nil {
		return true
	}
	if o.Qualifiers != nil && !slices.ContainsFunc(o.Qualifiers, func(x []byte) bool { return bytes.Equal(x, q) }) {
		return false
	}
	if !bytes.HasPrefix(q, o.QualifierPrefix) {
		return false
	}
	if o.QualifierStart != nil && bytes.Compare(q, o.QualifierStart) < 0 {
		return false
	}
	return o.QualifierStop == nil || bytes.Compare(q, o.QualifierStop) < 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (m *model) get(row []byte, o *storage.ReadOptions) ([]storage.Cell, error) {
	if err := storage.ValidateRow(row); err != nil {
		return nil, err
	}
	if err := storage.ValidateRead(m.spec, o); err != nil {
		return nil, err
	}
	cells := m.read(string(row), o, m.nowMicros())
	if len(cells) == 0 {
		return nil, fmt.Errorf("row %q: %w", row, storage.ErrNotFound)
	}
	return cells, nil
}

// scan returns the rows a scan yields: each row's cells that pass o, cut
// into batches of at most o's batch bound.
func (m *model) scan(o *storage.ScanOptions) ([]storage.Row, error) {
	if o == nil {
		o = &storage.ScanOptions{}
	}
	if err := storage.ValidateRead(m.spec, &o.ReadOptions); err != nil {
		return nil, err
	}
	if o.Limit < 0 || o.MaxBatchBytes < 0 {
		return nil, storage.Invalidf("negative limit %d or batch bound %d", o.Limit, o.MaxBatchBytes)
	}
	re, err := compileRowRegex(o.RowRegex)
	if err != nil {
		return nil, err
	}
	keys := m.scanKeys(o, re)
	now := m.nowMicros()
	var out []storage.Row
	rows := 0
	for _, k := range keys {
		if o.Limit > 0 && rows == o.Limit {
			break
		}
		cells := m.read(k, &o.ReadOptions, now)
		if len(cells) > 0 {
			rows++
			out = appendBatches(out, k, cells, o.BatchLimit())
		}
	}
	return out, nil
}

// appendBatches appends the row key's cells as Rows: each takes cells in
// order while their CellBytes sum stays within limit (the first cell
// always), and all but the last are Partial.
func appendBatches(out []storage.Row, key string, cells []storage.Cell, limit int) []storage.Row {
	for len(cells) > 0 {
		n, size := 1, storage.CellBytes(&cells[0])
		for n < len(cells) && size+storage.CellBytes(&cells[n]) <= limit {
			size += storage.CellBytes(&cells[n])
			n++
		}
		out = append(out, storage.Row{Key: []byte(key), Cells: cells[:n:n], Partial: n < len(cells)})
		cells = cells[n:]
	}
	return out
}

// scanKeys lists the row keys in [Start, Stop) that match re, in scan order.
func (m *model) scanKeys(o *storage.ScanOptions, re *regexp.Regexp) []string {
	var keys []string
	for k := range m.rows {
		if k < string(o.Start) || (o.Stop != nil && k >= string(o.Stop)) {
			continue
		}
		if re != nil && !re.MatchString(latin1(k)) {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if o.Reverse {
		slices.Reverse(keys)
	}
	return keys
}

// compileRowRegex compiles a whole-key byte regex. Go's regexp works on
// UTF-8, so pattern and keys are both read as Latin-1 (byte b is rune b):
// "." then matches one byte and \xff matches byte 0xFF, as with
// rsc.io/binaryregexp. The expression is compiled alone first so that an
// unbalanced one cannot become valid inside the anchoring group.
func compileRowRegex(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	if _, err := regexp.Compile(latin1(expr)); err != nil {
		return nil, storage.Invalidf("row regex %q: %v", expr, err)
	}
	re, err := regexp.Compile(`\A(?s:` + latin1(expr) + `)\z`)
	if err != nil {
		return nil, storage.Invalidf("row regex %q: %v", expr, err)
	}
	return re, nil
}

func latin1(s string) string {
	rs := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		rs[i] = rune(s[i])
	}
	return string(rs)
}

// rmwTimestamp stamps a read-modify-write result so it is the newest version
// even if the old one carries a timestamp ahead of the clock.
func (m *model) rmwTimestamp(old modelVersion, ok bool) int64 {
	now := m.nowMicros()
	if ok && old.ts > now {
		return old.ts
	}
	return now
}

func (m *model) validateColumn(row []byte, family string) error {
	if err := storage.ValidateRow(row); err != nil {
		return err
	}
	return storage.ValidateFamily(m.spec, family)
}

func (m *model) increment(row []byte, family string, qualifier []byte, delta int64) (int64, error) {
	if err := m.validateColumn(row, family); err != nil {
		return 0, err
	}
	old, ok := m.newest(row, family, qualifier)
	var n int64
	if ok {
		if len(old.value) != 8 {
			return 0, storage.Invalidf("increment %q: cell holds %d bytes, not 8", qualifier, len(old.value))
		}
		n = int64(binary.BigEndian.Uint64(old.value))
	}
	n += delta
	m.set(row, family, qualifier, m.rmwTimestamp(old, ok), binary.BigEndian.AppendUint64(nil, uint64(n)))
	return n, nil
}

func (m *model) checkAndPut(row []byte, family string, qualifier, expected []byte, cells []storage.Cell) error {
	if err := m.validateColumn(row, family); err != nil {
		return err
	}
	if err := storage.ValidateCells(m.spec, cells); err != nil {
		return err
	}
	old, ok := m.newest(row, family, qualifier)
	if expected == nil && ok || expected != nil && (!ok || !bytes.Equal(old.value, expected)) {
		return fmt.Errorf("check %s:%q: %w", family, qualifier, storage.ErrConflict)
	}
	m.write(row, cells)
	return nil
}

func (m *model) append(row []byte, family string, qualifier, value []byte) ([]byte, error) {
	if err := m.validateColumn(row, family); err != nil {
		return nil, err
	}
	old, ok := m.newest(row, family, qualifier)
	v := append(bytes.Clone(old.value), value...)
	m.set(row, family, qualifier, m.rmwTimestamp(old, ok), v)
	return bytes.Clone(v), nil
}

func cloneSpec(s storage.TableSpec) storage.TableSpec {
	s.Families = slices.Clone(s.Families)
	return s
}

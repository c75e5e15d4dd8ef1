package fsck

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/rowkey"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// rowFix is a row's repairs, applied at once after its cells are judged,
// and the findings waiting for their outcome.
type rowFix struct {
	dels     []storage.Deletion
	puts     []storage.Cell
	pending  []Finding
	rewrite  bool // duplicates: the data columns become one
	dataCols []int
	dropped  map[int]bool // cells deleted (not part of a rewrite)
}

// checkRow judges the gathered row.
func (c *checker) checkRow(ctx context.Context) error {
	c.row.finish()
	key := c.row.key
	k, err := c.opts.Layout.ParseRowKey(key)
	if err != nil {
		c.rep.Rows++
		if w := c.opts.Layout.Salt.Width(); w > 0 && len(key) > w {
			if uk, uerr := c.unsalt.ParseRowKey(key[w:]); uerr == nil {
				return c.badSalt(ctx, key, &uk)
			}
		}
		f := Finding{Kind: BadKey, Row: key, Detail: err.Error()}
		c.fixResult(&f, c.deleteRow(ctx, key))
		c.record(f)
		return nil
	}
	if isZero(k.Metric) {
		return nil // the global annotations' row, no series
	}
	if c.outOfRange(&k) {
		return nil
	}
	c.rep.Rows++
	if bad, err := c.checkUIDs(ctx, key, &k); err != nil || bad {
		if id, ok := c.opts.Index.Lookup(k.AppendTSUID(nil)); ok {
			c.seen.Add(id) // the series has a row, if an orphan one
		}
		return err
	}
	if err := c.checkIndexEntry(ctx, key, &k); err != nil {
		return err
	}
	return c.checkCells(ctx, key, &k)
}

// outOfRange reports a row of a whole-table scan outside [Start, End].
func (c *checker) outOfRange(k *rowkey.Key) bool {
	if len(c.opts.Metrics) > 0 || c.opts.Start == 0 && c.opts.End == 0 {
		return false
	}
	return k.BaseMs()+rowkey.RowSpanMs <= c.opts.Start || k.BaseMs() > c.opts.End
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// badSalt reports a row under another bucket than its series', and moves
// it to its key.
func (c *checker) badSalt(ctx context.Context, key []byte, uk *rowkey.Key) error {
	tags := make([]rowkey.Tag, uk.NumTags())
	for i := range tags {
		tags[i].Key, tags[i].Value = uk.Tag(i)
	}
	right, err := c.opts.Layout.AppendRowKey(nil, uk.Metric, uk.BaseMs(), tags)
	f := Finding{Kind: BadSalt, Row: key, Detail: fmt.Sprintf("salt %x, the series' bucket is %x", key[:c.opts.Layout.Salt.Width()], right[:c.opts.Layout.Salt.Width()])}
	if err == nil && c.opts.Fix {
		err = c.moveRow(ctx, key, right)
	}
	c.fixResult(&f, err)
	c.record(f)
	return nil
}

// moveRow writes the row's cells under key right and deletes it.
func (c *checker) moveRow(ctx context.Context, key, right []byte) error {
	cells := make([]storage.Cell, len(c.row.cells))
	copy(cells, c.row.cells)
	if err := c.opts.Data.Put(ctx, right, cells); err != nil {
		return err
	}
	return c.opts.Data.Delete(ctx, key)
}

// deleteRow deletes a row that cannot be read (with Fix).
func (c *checker) deleteRow(ctx context.Context, key []byte) error {
	if !c.opts.Fix {
		return nil
	}
	return c.opts.Data.Delete(ctx, key)
}

// checkUIDs reports a row naming a UID that has no name, and deletes it
// (with Fix): bad is true when the row was such a row.
func (c *checker) checkUIDs(ctx context.Context, key []byte, k *rowkey.Key) (bad bool, err error) {
	check := func(kind uid.Kind, b []byte) (Kind, uid.ID, error) {
		id, _, err := uid.ParseID(b, len(b))
		if err != nil {
			return UnknownUID, 0, nil
		}
		ck := uidKey{kind, id}
		if v, ok := c.uidOK[ck]; ok {
			return v, id, nil
		}
		v := NumKinds
		if _, err := c.opts.UIDs.Name(ctx, kind, id); errors.Is(err, uid.ErrNoSuchID) {
			v = OrphanRow
			if id > c.maxIDs[kind] {
				v = UnknownUID
			}
		} else if err != nil {
			return 0, 0, fmt.Errorf("fsck: name %s UID %d: %w", kind, id, err)
		}
		c.uidOK[ck] = v
		return v, id, nil
	}
	report := func(v Kind, kind uid.Kind, id uid.ID) {
		detail := fmt.Sprintf("%s UID %d has no name and was deleted (the max id is %d)", kind, id, c.maxIDs[kind])
		if v == UnknownUID {
			detail = fmt.Sprintf("%s UID %d was never assigned (the max id is %d)", kind, id, c.maxIDs[kind])
		}
		f := Finding{Kind: v, Row: key, Detail: detail}
		c.fixResult(&f, c.deleteRow(ctx, key))
		c.record(f)
	}
	v, id, err := check(uid.Metric, k.Metric)
	if err != nil || v != NumKinds {
		if err == nil {
			report(v, uid.Metric, id)
		}
		return err == nil, err
	}
	for i := 0; i < k.NumTags(); i++ {
		tk, tv := k.Tag(i)
		for _, x := range [2]struct {
			kind uid.Kind
			b    []byte
		}{{uid.TagK, tk}, {uid.TagV, tv}} {
			v, id, err := check(x.kind, x.b)
			if err != nil || v != NumKinds {
				if err == nil {
					report(v, x.kind, id)
				}
				return err == nil, err
			}
		}
	}
	return false, nil
}

// checkIndexEntry reports a row whose series the index misses, or whose
// hour is outside the series' span, and registers it (with Fix).
func (c *checker) checkIndexEntry(ctx context.Context, key []byte, k *rowkey.Key) error {
	tsuid := k.AppendTSUID(nil)
	detail := "the series index does not list the series"
	if id, ok := c.opts.Index.Lookup(tsuid); ok {
		c.seen.Add(id)
		s, _ := c.opts.Index.Series(id)
		if !s.HasSpan || k.Base >= s.First && k.Base <= s.Last {
			return nil
		}
		detail = fmt.Sprintf("the series' span in the index (hours %d to %d) misses the row's hour %d", s.First, s.Last, k.Base)
	}
	f := Finding{Kind: MissingIndex, Row: key, Detail: detail}
	var err error
	if c.opts.Fix {
		var id uint32
		if id, err = c.opts.Index.Register(ctx, tsuid, k.BaseMs(), k.BaseMs()+rowkey.RowSpanMs-1); err == nil {
			c.seen.Add(id)
		}
	}
	c.fixResult(&f, err)
	c.record(f)
	return nil
}

// checkCells judges every cell of a row whose key is good, then applies
// the row's repairs in one mutation.
func (c *checker) checkCells(ctx context.Context, key []byte, k *rowkey.Key) error {
	fx := rowFix{dropped: map[int]bool{}}
	clear(c.counted)
	for i := range c.row.cells {
		c.rep.Cells++
		c.checkCell(k, i, &fx)
	}
	dups := 0
	for _, n := range c.counted {
		if n > 1 {
			dups++
		}
	}
	if dups > 0 {
		f := Finding{Kind: Duplicate, Row: key, Detail: fmt.Sprintf("%d timestamps held more than once in %d data columns", dups, len(fx.dataCols))}
		switch {
		case c.opts.Fix && c.opts.ResolveDuplicates:
			fx.rewrite = true
		case c.opts.Fix:
			f.Unfixed = "run with --resolve-duplicates to keep the last write of each"
		}
		fx.pending = append(fx.pending, f)
	}
	return c.applyRow(ctx, key, k, &fx)
}

// checkCell judges one cell.
func (c *checker) checkCell(k *rowkey.Key, i int, fx *rowFix) {
	cl := &c.row.cells[i]
	bad := func(kind Kind, detail string) {
		fx.pending = append(fx.pending, Finding{Kind: kind, Row: c.row.key, Qualifier: cl.Qualifier, Detail: detail})
		fx.dels = append(fx.dels, storage.Deletion{Kind: storage.DeleteColumn, Family: c.opts.Family, Qualifier: cl.Qualifier})
		fx.dropped[i] = true
	}
	var err error
	c.pts = c.pts[:0]
	switch rowkey.Classify(cl.Qualifier) {
	case rowkey.ColumnSingle:
		c.checkSingle(k, i, fx, bad)
		return
	case rowkey.ColumnCompacted:
		if c.pts, err = rowkey.ParseCompacted(c.pts, k.Base, cl.Qualifier, cl.Value); err != nil {
			bad(BadCompacted, "compacted column: "+err.Error())
			return
		}
	case rowkey.ColumnAppends:
		if c.pts, err = rowkey.ParseAppends(c.pts, k.Base, cl.Value); err != nil {
			bad(BadCompacted, "appends column: "+err.Error())
			return
		}
	case rowkey.ColumnDense:
		if _, _, err = rowkey.ParseDenseQualifier(cl.Qualifier); err == nil {
			c.pts, err = c.dense.DecodeDense(c.pts, k.Base, cl.Value)
		}
		if err != nil {
			bad(BadDense, "dense column: "+err.Error())
			return
		}
	case rowkey.ColumnAnnotation, rowkey.ColumnHistogram:
		return
	default:
		fx.pending = append(fx.pending, Finding{Kind: BadQualifier, Row: c.row.key, Qualifier: cl.Qualifier,
			Detail: "a column of no kind tsd knows", Unfixed: c.unfixed("left in place: a newer writer may know it")})
		return
	}
	c.countPoints(i, fx)
}

// unfixed returns why for a finding never repaired, when Fix is on.
func (c *checker) unfixed(why string) string {
	if !c.opts.Fix {
		return ""
	}
	return why
}

// countPoints counts c.pts, the points of data cell i, per timestamp.
func (c *checker) countPoints(i int, fx *rowFix) {
	fx.dataCols = append(fx.dataCols, i)
	c.rep.Points += int64(len(c.pts))
	for _, p := range c.pts {
		c.counted[p.T]++
	}
}

// checkSingle judges a single-point cell: its qualifier, then its value's
// length, repairable by OpenTSDB's fix when the qualifier is 2 bytes.
func (c *checker) checkSingle(k *rowkey.Key, i int, fx *rowFix, bad func(Kind, string)) {
	cl := &c.row.cells[i]
	q, rest, err := rowkey.ParseQualifier(cl.Qualifier)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("qualifier %x: %d bytes left over", cl.Qualifier, len(rest))
	}
	if err != nil {
		bad(BadQualifier, err.Error())
		return
	}
	t := k.BaseMs() + q.Offset
	p, err := rowkey.DecodeValue(t, q.Flags, cl.Value)
	if err == nil {
		c.pts = append(c.pts[:0], p)
		c.countPoints(i, fx)
		return
	}
	detail := fmt.Sprintf("value of %d bytes, flags 0x%x announce %d", len(cl.Value), uint8(q.Flags), q.Flags.ValueLen())
	if !q.Ms {
		if nf, nv, ferr := rowkey.FixSingle(q.Flags, cl.Value); ferr == nil {
			if p, derr := rowkey.DecodeValue(t, nf, nv); derr == nil {
				c.fixSingle(k, i, fx, q, nf, nv, detail)
				c.pts = append(c.pts[:0], p)
				c.countPoints(i, fx)
				return
			}
		}
	}
	bad(BadValueLength, detail+"; unreadable")
}

// fixSingle rewrites a single cell with OpenTSDB's repaired flags and value.
func (c *checker) fixSingle(k *rowkey.Key, i int, fx *rowFix, q rowkey.Qualifier, nf rowkey.Flags, nv []byte, detail string) {
	cl := &c.row.cells[i]
	q.Flags = nf
	nq, err := rowkey.AppendQualifier(nil, q)
	f := Finding{Kind: BadValueLength, Row: c.row.key, Qualifier: cl.Qualifier, Detail: detail + "; read through OpenTSDB's repair"}
	if err != nil {
		f.Unfixed = c.unfixed(err.Error())
		fx.pending = append(fx.pending, f)
		return
	}
	fx.pending = append(fx.pending, f)
	fx.dels = append(fx.dels, storage.Deletion{Kind: storage.DeleteColumn, Family: c.opts.Family, Qualifier: cl.Qualifier})
	fx.puts = append(fx.puts, storage.Cell{Family: c.opts.Family, Qualifier: nq, Value: append([]byte(nil), nv...), Timestamp: cl.Timestamp})
	// The repaired cell stands for the old one in a duplicate rewrite.
	cl.Qualifier, cl.Value = nq, fx.puts[len(fx.puts)-1].Value
}

// applyRow makes the row's repairs (with Fix) and records its findings.
func (c *checker) applyRow(ctx context.Context, key []byte, k *rowkey.Key, fx *rowFix) error {
	var err error
	if c.opts.Fix && (len(fx.dels) > 0 || len(fx.puts) > 0 || fx.rewrite) {
		if fx.rewrite {
			err = c.rewriteRow(k, fx)
		}
		if err == nil {
			err = c.opts.Data.Apply(ctx, []storage.Mutation{{Row: key, Deletes: fx.dels, Cells: fx.puts}})
		}
	}
	for _, f := range fx.pending {
		if f.Unfixed == "" {
			c.fixResult(&f, err)
		}
		c.record(f)
	}
	return nil
}

// rewriteRow replaces the row's good data columns by one holding what a
// reader decodes from them: the last write of each timestamp.
func (c *checker) rewriteRow(k *rowkey.Key, fx *rowFix) error {
	cells := make([]rowkey.Cell, 0, len(fx.dataCols))
	for _, i := range fx.dataCols {
		cells = append(cells, c.row.cells[i])
	}
	pts, err := c.dec.Decode(nil, k.Base, cells)
	if err != nil {
		return fmt.Errorf("decode the row: %w", err)
	}
	fx.puts = fx.puts[:0] // a repaired single cell is in the rewrite
	for _, cl := range cells {
		fx.dels = append(fx.dels, storage.Deletion{Kind: storage.DeleteColumn, Family: c.opts.Family, Qualifier: cl.Qualifier})
	}
	for len(pts) > 0 {
		chunk := pts[:min(len(pts), rowkey.MaxDensePoints)]
		pts = pts[len(chunk):]
		q, v, err := c.encode(k.Base, chunk, len(fx.puts))
		if err != nil {
			return err
		}
		fx.puts = append(fx.puts, storage.Cell{Family: c.opts.Family, Qualifier: q, Value: v})
	}
	return nil
}

// encode writes points as one column in the store's format: OpenTSDB's
// compacted column, or a dense column of writer 0 (no daemon's writer
// id; its flush numbers number the columns of one rewrite).
func (c *checker) encode(base int64, pts []series.Point, seq int) (q, v []byte, err error) {
	if c.opts.Format == schema.FormatOpenTSDB {
		return rowkey.AppendCompacted(nil, nil, base, pts)
	}
	v, err = c.enc.Append(nil, base, pts)
	return rowkey.AppendDenseQualifier(nil, 0, uint32(seq)), v, err
}

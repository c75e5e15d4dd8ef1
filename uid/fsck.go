package uid

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tsd-db/tsd/storage"
)

// ProblemClass is a kind of inconsistency in the UID table; the classes are
// those of OpenTSDB's `uid fsck` (src/tools/UidManager.java) plus
// malformed cells.
type ProblemClass uint8

const (
	// MaxIDCountMismatch: MAXID is above the number of UIDs in use. It is
	// normal after deletes and lost races (leaked IDs): a warning, never
	// fixed.
	MaxIDCountMismatch ProblemClass = iota
	// IDAboveMaxID: a map uses an ID above MAXID, so future IDs could be
	// assigned twice. Fix: raise MAXID to the highest ID found.
	IDAboveMaxID
	// MaxIDBadWidth: the MAXID cell is not 8 bytes. Fix: rewrite it on 8
	// bytes as the larger of its value and the highest ID found.
	MaxIDBadWidth
	// ForwardWithoutReverse: name → UID with no UID → name. Fix: write the
	// reverse map.
	ForwardWithoutReverse
	// ForwardReverseMismatch: name → UID but UID → another name that does
	// not map back to the UID. Fix: point the reverse map at name.
	ForwardReverseMismatch
	// DuplicateForward: several names map to one UID, so their data is
	// mixed. Fix, as OpenTSDB does: delete those forward maps and give the
	// UID the name "fsck.<name1>.<name2>…"; the old names get new UIDs on
	// their next write.
	DuplicateForward
	// ReverseWithoutForward: UID → name while no forward map points at the
	// UID (the name is unknown or maps elsewhere). Fix: delete the reverse
	// map.
	ReverseWithoutForward
	// BadForwardValue: a forward value is not a UID of the kind's width, or
	// is 0. Not fixed: a wrong width setting would look the same.
	BadForwardValue
	// BadReverseRow: a reverse map's row is not a UID of the kind's width.
	// Not fixed, for the same reason.
	BadReverseRow
)

var problemNames = [...]string{
	"max-id-count-mismatch", "id-above-max-id", "max-id-bad-width",
	"forward-without-reverse", "forward-reverse-mismatch", "duplicate-forward",
	"reverse-without-forward", "bad-forward-value", "bad-reverse-row",
}

// String returns a stable hyphenated name of the class.
func (c ProblemClass) String() string {
	if int(c) < len(problemNames) {
		return problemNames[c]
	}
	return fmt.Sprintf("problem(%d)", uint8(c))
}

// Problem is one inconsistency found by Fsck.
type Problem struct {
	Class ProblemClass
	Kind  Kind
	// Message describes it in OpenTSDB's wording where it has one.
	Message string
	// Fixed says the repair was written; FixErr says why it failed.
	Fixed  bool
	FixErr string
}

// Report is the result of Fsck.
type Report struct {
	// Cells counts the cells examined.
	Cells int
	// MaxID is each kind's MAXID counter as found (0 when absent).
	MaxID [NumKinds]ID
	// Forward and Reverse count each kind's well-formed maps.
	Forward, Reverse [NumKinds]int
	// Problems lists what was found, kind by kind, in ID order.
	Problems []Problem
}

// Errors counts problems other than the MaxIDCountMismatch warning.
func (r *Report) Errors() int {
	n := 0
	for _, p := range r.Problems {
		if p.Class != MaxIDCountMismatch {
			n++
		}
	}
	return n
}

// Unfixed counts errors that are still there (all of them without fix).
func (r *Report) Unfixed() int {
	n := 0
	for _, p := range r.Problems {
		if p.Class != MaxIDCountMismatch && !p.Fixed {
			n++
		}
	}
	return n
}

// fsckKind is the scanned state of one kind.
type fsckKind struct {
	maxID    ID
	maxIDRaw []byte // nil when absent
	fwd      map[string]ID
	rev      map[ID]string
}

// Fsck scans the whole UID table and reports every inconsistency; with fix
// it also repairs those that have a repair and then drops the caches. Run it
// with writers stopped: a live assignment between the scan and a repair
// could be misjudged.
func (u *UIDs) Fsck(ctx context.Context, fix bool) (Report, error) {
	var r Report
	st, err := u.fsckScan(ctx, &r)
	if err != nil {
		return r, err
	}
	for _, k := range Kinds {
		r.MaxID[k] = st[k].maxID
		r.Forward[k], r.Reverse[k] = len(st[k].fwd), len(st[k].rev)
		c := fsckCheck{u: u, r: &r, k: k, st: &st[k], fix: fix}
		c.run(ctx)
	}
	if fix {
		u.DropCaches()
	}
	return r, nil
}

// fsckScan reads every cell into per-kind maps, reporting malformed ones.
func (u *UIDs) fsckScan(ctx context.Context, r *Report) ([NumKinds]fsckKind, error) {
	var st [NumKinds]fsckKind
	for k := range st {
		st[k].fwd = make(map[string]ID)
		st[k].rev = make(map[ID]string)
	}
	sc := u.tbl.Scan(ctx, &storage.ScanOptions{})
	defer sc.Close()
	for sc.Next() {
		for _, c := range sc.Row().Cells {
			r.Cells++
			u.fsckCell(c, &st, r)
		}
	}
	return st, sc.Err()
}

func (u *UIDs) fsckCell(c storage.Cell, st *[NumKinds]fsckKind, r *Report) {
	k, meta := kindOfQualifier(c.Qualifier)
	if !k.Valid() || meta {
		return // UIDMeta and foreign columns are not checked
	}
	w := u.kinds[k].width
	switch {
	case c.Family == FamilyID && bytes.Equal(c.Row, MaxIDRow):
		st[k].maxIDRaw = bytes.Clone(c.Value)
		st[k].maxID = decodeCounter(c.Value)
		if len(c.Value) != 8 {
			r.Problems = append(r.Problems, Problem{Class: MaxIDBadWidth, Kind: k,
				Message: fmt.Sprintf("Invalid maximum ID for %s: should be on 8 bytes (found %d: %X)", k, len(c.Value), c.Value)})
		}
	case c.Family == FamilyID:
		name := string(DecodeName(u.opts.Format, nil, c.Row))
		id, err := parseExactID(c.Value, w)
		if err == nil && id == 0 {
			err = fmt.Errorf("uid 0 is never assigned")
		}
		if err != nil {
			r.Problems = append(r.Problems, Problem{Class: BadForwardValue, Kind: k,
				Message: fmt.Sprintf("Forward %s mapping %s -> %X is malformed: %v", k, name, c.Value, err)})
			return
		}
		st[k].fwd[name] = id
	case c.Family == FamilyName:
		id, err := parseExactID(c.Row, w)
		if err == nil && id == 0 {
			err = fmt.Errorf("uid 0 is never assigned")
		}
		if err != nil {
			r.Problems = append(r.Problems, Problem{Class: BadReverseRow, Kind: k,
				Message: fmt.Sprintf("Reverse %s mapping row %X is malformed: %v", k, c.Row, err)})
			return
		}
		st[k].rev[id] = string(DecodeName(u.opts.Format, nil, c.Value))
	}
}

// kindOfQualifier maps "metrics" to Metric and "metric_meta" to
// (Metric, true); anything else to an invalid kind.
func kindOfQualifier(q []byte) (Kind, bool) {
	for _, k := range Kinds {
		if bytes.Equal(q, kindQuals[k]) {
			return k, false
		}
		if bytes.Equal(q, kindMetaQuals[k]) {
			return k, true
		}
	}
	return NumKinds, false
}

// decodeCounter reads a big-endian counter of up to 8 bytes (longer values
// keep their low 8 bytes) so a malformed MAXID still informs the repair.
func decodeCounter(v []byte) ID {
	if len(v) > 8 {
		v = v[len(v)-8:]
	}
	var b [8]byte
	copy(b[8-len(v):], v)
	return ID(binary.BigEndian.Uint64(b[:]))
}

// fsckCheck judges one kind.
type fsckCheck struct {
	u   *UIDs
	r   *Report
	k   Kind
	st  *fsckKind
	fix bool
}

func (c *fsckCheck) run(ctx context.Context) {
	byID := make(map[ID][]string)
	for name, id := range c.st.fwd {
		byID[id] = append(byID[id], name)
	}
	c.checkMaxID(ctx, byID)
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		names := byID[id]
		slices.Sort(names)
		c.checkForward(ctx, id, names)
	}
	for _, id := range slices.Sorted(maps.Keys(c.st.rev)) {
		if _, ok := byID[id]; !ok {
			c.checkOrphanReverse(ctx, id, c.st.rev[id])
		}
	}
}

func (c *fsckCheck) uidString(id ID) string {
	return fmt.Sprintf("%X", c.u.AppendID(nil, c.k, id))
}

func (c *fsckCheck) add(p Problem, repair func() error) {
	p.Kind = c.k
	if c.fix && repair != nil {
		if err := repair(); err != nil {
			p.FixErr = err.Error()
		} else {
			p.Fixed = true
		}
	}
	c.r.Problems = append(c.r.Problems, p)
}

// checkMaxID compares MAXID with the IDs in use.
func (c *fsckCheck) checkMaxID(ctx context.Context, byID map[ID][]string) {
	highest := ID(0)
	for id := range byID {
		highest = max(highest, id)
	}
	for id := range c.st.rev {
		highest = max(highest, id)
	}
	maxID := c.st.maxID
	badWidth := c.st.maxIDRaw != nil && len(c.st.maxIDRaw) != 8
	var widthErr error
	if badWidth && c.fix {
		widthErr = c.writeMaxID(ctx, max(highest, maxID))
		c.markMaxIDFix(widthErr)
	}
	if highest > maxID {
		c.add(Problem{Class: IDAboveMaxID, Message: fmt.Sprintf(
			"We found an ID of %d for %s but the max ID is only %d!  Future IDs may be double-assigned!", highest, c.k, maxID)},
			func() error {
				if badWidth {
					return widthErr // rewritten above
				}
				return c.writeMaxID(ctx, highest)
			})
	} else if int(maxID) > len(byID) {
		c.add(Problem{Class: MaxIDCountMismatch, Message: fmt.Sprintf(
			"Max ID for %s is %d but only %d entries were found.  Maybe %d IDs were deleted?", c.k, maxID, len(byID), int(maxID)-len(byID))}, nil)
	}
}

// markMaxIDFix records the outcome of the MAXID rewrite on the
// MaxIDBadWidth problem fsckScan reported.
func (c *fsckCheck) markMaxIDFix(err error) {
	for i := range c.r.Problems {
		p := &c.r.Problems[i]
		if p.Class == MaxIDBadWidth && p.Kind == c.k {
			p.Fixed = err == nil
			if err != nil {
				p.FixErr = err.Error()
			}
		}
	}
}

// writeMaxID sets MAXID if it still holds what the scan saw.
func (c *fsckCheck) writeMaxID(ctx context.Context, v ID) error {
	val := binary.BigEndian.AppendUint64(nil, uint64(v))
	cell := storage.Cell{Family: FamilyID, Qualifier: kindQuals[c.k], Value: val}
	err := c.u.tbl.CheckAndPut(ctx, MaxIDRow, FamilyID, kindQuals[c.k], c.st.maxIDRaw, []storage.Cell{cell})
	if err == nil {
		c.st.maxIDRaw, c.st.maxID = val, v
	}
	return err
}

// checkForward judges the names that map to one ID.
func (c *fsckCheck) checkForward(ctx context.Context, id ID, names []string) {
	rname, hasRev := c.st.rev[id]
	us := c.uidString(id)
	switch {
	case len(names) > 1:
		c.add(Problem{Class: DuplicateForward, Message: fmt.Sprintf(
			"Inconsistent forward %s mapping: %s all -> %s (reverse %s -> %q)", c.k, quoteAll(names), us, us, rname)},
			func() error { return c.splitDuplicate(ctx, id, names) })
	case !hasRev:
		c.add(Problem{Class: ForwardWithoutReverse, Message: fmt.Sprintf(
			"Forward %s mapping is missing reverse mapping: %s -> %s", c.k, names[0], us)},
			func() error { return c.putReverse(ctx, id, names[0]) })
	case rname != names[0]:
		c.add(Problem{Class: ForwardReverseMismatch, Message: fmt.Sprintf(
			"Forward %s mapping %s -> %s is different than reverse mapping: %s -> %s (and %s has no forward mapping to it)",
			c.k, names[0], us, us, rname, rname)},
			func() error { return c.putReverse(ctx, id, names[0]) })
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func (c *fsckCheck) putReverse(ctx context.Context, id ID, name string) error {
	stored, err := EncodeName(c.u.opts.Format, nil, []byte(name))
	if err != nil {
		return err
	}
	return c.u.putRetry(ctx, c.u.AppendID(nil, c.k, id), reverseCell(c.k, stored))
}

// splitDuplicate deletes the forward maps of every name sharing id and names
// id "fsck.<names joined by dots>".
func (c *fsckCheck) splitDuplicate(ctx context.Context, id ID, names []string) error {
	merged := "fsck." + strings.Join(names, ".")
	row, err := c.u.storedName(c.k, merged)
	if err != nil {
		return err
	}
	if _, taken := c.st.fwd[merged]; taken {
		return fmt.Errorf("%w: cannot rename to %q", ErrNameExists, merged)
	}
	uidBytes := c.u.AppendID(nil, c.k, id)
	if err := c.u.putRetry(ctx, uidBytes, reverseCell(c.k, row)); err != nil {
		return err
	}
	if err := c.u.putRetry(ctx, row, forwardCell(c.k, uidBytes)); err != nil {
		return err
	}
	for _, n := range names {
		stored, err := EncodeName(c.u.opts.Format, nil, []byte(n))
		if err != nil {
			return err
		}
		if err := c.u.deleteRetry(ctx, stored, forwardColumn(c.k)); err != nil {
			return err
		}
	}
	c.st.fwd[merged] = id
	return nil
}

// checkOrphanReverse judges a reverse map no forward map points at.
func (c *fsckCheck) checkOrphanReverse(ctx context.Context, id ID, name string) {
	us := c.uidString(id)
	msg := fmt.Sprintf("Reverse %s mapping is missing forward mapping: %s -> %s", c.k, us, name)
	if other, ok := c.st.fwd[name]; ok {
		os := c.uidString(other)
		msg = fmt.Sprintf("Inconsistent reverse %s mapping %s -> %s vs %s -> %s / %s -> %s", c.k, us, name, os, name, name, os)
	}
	c.add(Problem{Class: ReverseWithoutForward, Message: msg}, func() error {
		return c.u.deleteRetry(ctx, c.u.AppendID(nil, c.k, id), reverseColumn(c.k))
	})
}

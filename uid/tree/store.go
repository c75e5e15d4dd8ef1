package tree

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tsd-db/tsd/storage"
)

// TableSpec is the tree table's spec: one family, one version per column.
func TableSpec(name string) storage.TableSpec {
	return storage.TableSpec{Name: name, Families: []storage.FamilySpec{{Name: Family, MaxVersions: 1}}}
}

// Store reads and writes trees in the tree table. It is safe for
// concurrent use and owns no goroutine.
type Store struct {
	t   storage.Table
	now func() time.Time
}

// NewStore returns a Store over t, which must have the family Family.
func NewStore(t storage.Table) (*Store, error) {
	for _, f := range t.Spec().Families {
		if f.Name == Family {
			return &Store{t: t, now: time.Now}, nil
		}
	}
	return nil, fmt.Errorf("tree: table %s has no family %q", t.Spec().Name, Family)
}

var familyOnly = &storage.ReadOptions{Families: []string{Family}}

// Tree reads a tree with its rules; ErrNotFound when it has no definition.
func (s *Store) Tree(ctx context.Context, id int) (*Tree, error) {
	key, err := IDBytes(id)
	if err != nil {
		return nil, err
	}
	cells, err := s.t.Get(ctx, key, familyOnly)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("tree: read tree %d: %w", id, err)
	}
	t, err := treeOfRow(id, cells)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, ErrNotFound
	}
	return t, nil
}

// treeOfRow reads a definition row; nil when it holds no tree column.
func treeOfRow(id int, cells []storage.Cell) (*Tree, error) {
	t := &Tree{ID: id}
	found := false
	for _, c := range cells {
		switch {
		case bytes.Equal(c.Qualifier, qualTree):
			if err := decodeStoredTree(t, c.Value); err != nil {
				return nil, fmt.Errorf("tree: tree %d: %w", id, err)
			}
			found = true
		case len(c.Qualifier) > len(prefixRule) && bytes.HasPrefix(c.Qualifier, prefixRule):
			r, err := decodeStoredRule(c.Value)
			if err != nil {
				return nil, fmt.Errorf("tree: tree %d rule %s: %w", id, c.Qualifier, err)
			}
			t.addRule(r)
		}
	}
	if !found {
		return nil, nil
	}
	return t, nil
}

// Trees reads every tree, by id (Tree.fetchAllTrees). Rather than scan
// every branch row, it seeks from one tree to the next: a scan of one row
// from the next id finds the next tree's first row.
func (s *Store) Trees(ctx context.Context) ([]*Tree, error) {
	var out []*Tree
	for next := 1; next < MaxID; {
		id, err := s.nextTreeID(ctx, next)
		if err != nil {
			return nil, err
		}
		if id == 0 {
			break
		}
		t, err := s.Tree(ctx, id)
		switch {
		case err == nil:
			out = append(out, t)
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
		next = id + 1
	}
	return out, nil
}

// nextTreeID returns the id of the first row at or after tree id from, 0
// when there is none below MaxID (OpenTSDB's scan stops before FFFF).
func (s *Store) nextTreeID(ctx context.Context, from int) (int, error) {
	sc := s.t.Scan(ctx, &storage.ScanOptions{Start: []byte{byte(from >> 8), byte(from)}, Stop: []byte{0xFF, 0xFF},
		Limit: 1, ReadOptions: storage.ReadOptions{Families: []string{Family}, Qualifiers: [][]byte{qualTree, qualBranch}}})
	defer sc.Close()
	id := 0
	if sc.Next() {
		id = IDOf(sc.Row().Key)
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("tree: scan trees: %w", err)
	}
	return id, nil
}

// casAttempts bounds the retries of a check-and-put that lost a race.
const casAttempts = 5

// CreateTree stores a new tree with the next id (the highest stored plus
// one) and returns it as stored.
func (s *Store) CreateTree(ctx context.Context, e *TreeEdit) (*Tree, error) {
	if e.Name == nil || *e.Name == "" {
		return nil, fmt.Errorf("%w: Tree was missing the name", ErrInvalid)
	}
	for range casAttempts {
		all, err := s.Trees(ctx)
		if err != nil {
			return nil, err
		}
		id := 1
		for _, t := range all {
			id = max(id, t.ID+1)
		}
		if id > MaxID {
			return nil, fmt.Errorf("tree: Exhausted all Tree IDs")
		}
		t := &Tree{ID: id, Created: s.now().Unix()}
		e.apply(t, true)
		key, _ := IDBytes(id)
		err = s.t.CheckAndPut(ctx, key, Family, qualTree, nil,
			[]storage.Cell{{Family: Family, Qualifier: qualTree, Value: t.appendStorageJSON(nil)}})
		if errors.Is(err, storage.ErrConflict) {
			continue // another daemon took the id
		}
		if err != nil {
			return nil, fmt.Errorf("tree: create tree %d: %w", id, err)
		}
		return s.Tree(ctx, id)
	}
	return nil, fmt.Errorf("tree: create tree: %w", storage.ErrConflict)
}

// EditTree changes a stored tree (Tree.storeTree): POST copies the changed
// fields, PUT (overwrite) every field. ErrNoChange when the edit changes
// nothing, ErrNotFound without the tree.
func (s *Store) EditTree(ctx context.Context, e *TreeEdit, overwrite bool) (*Tree, error) {
	key, err := IDBytes(e.ID)
	if err != nil {
		return nil, err
	}
	if !e.changes() {
		return nil, ErrNoChange
	}
	for range casAttempts {
		cells, err := s.t.Get(ctx, key, &storage.ReadOptions{Families: []string{Family}, Qualifiers: [][]byte{qualTree}})
		if errors.Is(err, storage.ErrNotFound) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("tree: read tree %d: %w", e.ID, err)
		}
		t := &Tree{ID: e.ID}
		if err := decodeStoredTree(t, cells[0].Value); err != nil {
			return nil, fmt.Errorf("tree: tree %d: %w", e.ID, err)
		}
		e.apply(t, overwrite)
		err = s.t.CheckAndPut(ctx, key, Family, qualTree, cells[0].Value,
			[]storage.Cell{{Family: Family, Qualifier: qualTree, Value: t.appendStorageJSON(nil)}})
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tree: store tree %d: %w", e.ID, err)
		}
		return s.Tree(ctx, e.ID)
	}
	return nil, fmt.Errorf("tree: store tree %d: %w", e.ID, storage.ErrConflict)
}

// DeleteTree removes a tree's branches, leaves, collisions and not-matched
// entries, and with definition its definition and rules too
// (Tree.deleteTree): every column of those kinds in the rows of the tree,
// other columns left alone.
func (s *Store) DeleteTree(ctx context.Context, id int, definition bool) error {
	start, err := IDBytes(id)
	if err != nil {
		return err
	}
	stop := []byte{byte((id + 1) >> 8), byte(id + 1)}
	if id == MaxID {
		stop = []byte{0xFF, 0xFF, 0xFF}
	}
	sc := s.t.Scan(ctx, &storage.ScanOptions{Start: start, Stop: stop, ReadOptions: *familyOnly})
	defer sc.Close()
	var muts []storage.Mutation
	for sc.Next() {
		r := sc.Row()
		var dels []storage.Deletion
		for _, c := range r.Cells {
			if deletable(c.Qualifier, definition) {
				dels = append(dels, storage.Deletion{Kind: storage.DeleteColumn, Family: Family, Qualifier: bytes.Clone(c.Qualifier)})
			}
		}
		if len(dels) > 0 {
			muts = append(muts, storage.Mutation{Row: bytes.Clone(r.Key), Deletes: dels})
		}
		if len(muts) >= 256 {
			if err := s.t.Apply(ctx, muts); err != nil {
				return fmt.Errorf("tree: delete tree %d: %w", id, err)
			}
			muts = muts[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("tree: delete tree %d: %w", id, err)
	}
	if len(muts) > 0 {
		if err := s.t.Apply(ctx, muts); err != nil {
			return fmt.Errorf("tree: delete tree %d: %w", id, err)
		}
	}
	return nil
}

func deletable(q []byte, definition bool) bool {
	prefixed := func(p []byte) bool { return len(q) > len(p) && bytes.HasPrefix(q, p) }
	switch {
	case bytes.Equal(q, qualTree):
		return definition
	case bytes.Equal(q, qualBranch):
		return true
	case prefixed(prefixLeaf), prefixed(prefixCollision), prefixed(prefixNotMatched):
		return true
	case prefixed(prefixRule):
		return definition
	}
	return false
}

// Rule reads one rule; ErrNotFound when there is none.
func (s *Store) Rule(ctx context.Context, id, level, order int) (*Rule, error) {
	r, _, err := s.readRule(ctx, id, level, order)
	return r, err
}

func (s *Store) readRule(ctx context.Context, id, level, order int) (*Rule, []byte, error) {
	key, err := IDBytes(id)
	if err != nil {
		return nil, nil, err
	}
	if level < 0 {
		return nil, nil, fmt.Errorf("%w: Invalid rule level", ErrInvalid)
	}
	if order < 0 {
		return nil, nil, fmt.Errorf("%w: Invalid rule order", ErrInvalid)
	}
	cells, err := s.t.Get(ctx, key, &storage.ReadOptions{Families: []string{Family}, Qualifiers: [][]byte{ruleQualifier(level, order)}})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tree: read rule: %w", err)
	}
	r, err := decodeStoredRule(cells[0].Value)
	if err != nil {
		return nil, nil, fmt.Errorf("tree: rule %d:%d:%d: %w", id, level, order, err)
	}
	return r, cells[0].Value, nil
}

// PutRule stores a rule (TreeRule.syncToStorage): a new one as given, an
// existing one with the changed fields (POST) or every field (PUT,
// overwrite). ErrNoChange when it changes nothing; a rule that fails
// validation is ErrInvalid.
func (s *Store) PutRule(ctx context.Context, e *RuleEdit, overwrite bool) (*Rule, error) {
	key, err := IDBytes(e.TreeID)
	if err != nil {
		return nil, err
	}
	if len(e.Set) == 0 {
		return nil, ErrNoChange
	}
	for range casAttempts {
		stored, orig, err := s.readRule(ctx, e.TreeID, e.Level, e.Order)
		switch {
		case errors.Is(err, ErrNotFound):
			r := e.Rule
			stored = &r
		case err != nil:
			return nil, err
		default:
			if !stored.copyChanges(e, overwrite) {
				return nil, ErrNoChange
			}
		}
		stored.TreeID, stored.Level, stored.Order = e.TreeID, e.Level, e.Order
		if err := stored.validate(); err != nil {
			return nil, err
		}
		q := ruleQualifier(e.Level, e.Order)
		err = s.t.CheckAndPut(ctx, key, Family, q, orig, []storage.Cell{{Family: Family, Qualifier: q, Value: stored.AppendJSON(nil)}})
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("tree: store rule %s: %w", stored, err)
		}
		return s.Rule(ctx, e.TreeID, e.Level, e.Order)
	}
	return nil, fmt.Errorf("tree: store rule: %w", storage.ErrConflict)
}

// DeleteRule removes one rule.
func (s *Store) DeleteRule(ctx context.Context, id, level, order int) error {
	key, err := IDBytes(id)
	if err != nil {
		return err
	}
	if err := s.t.Delete(ctx, key, storage.Deletion{Kind: storage.DeleteColumn, Family: Family, Qualifier: ruleQualifier(level, order)}); err != nil {
		return fmt.Errorf("tree: delete rule: %w", err)
	}
	return nil
}

// DeleteRules removes every rule of a tree (TreeRule.deleteAllRules).
func (s *Store) DeleteRules(ctx context.Context, id int) error {
	key, err := IDBytes(id)
	if err != nil {
		return err
	}
	cells, err := s.t.Get(ctx, key, &storage.ReadOptions{Families: []string{Family}, QualifierPrefix: prefixRule})
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tree: read rules: %w", err)
	}
	dels := make([]storage.Deletion, 0, len(cells))
	for _, c := range cells {
		if len(c.Qualifier) > len(prefixRule) {
			dels = append(dels, storage.Deletion{Kind: storage.DeleteColumn, Family: Family, Qualifier: c.Qualifier})
		}
	}
	if len(dels) == 0 {
		return nil
	}
	if err := s.t.Delete(ctx, key, dels...); err != nil {
		return fmt.Errorf("tree: delete rules: %w", err)
	}
	return nil
}

// Branch reads a branch with its children (without their children) and
// its leaves (without names): the branch's row and the rows 4 bytes
// longer that start with its id (Branch.fetchBranch). ErrNotFound when
// the branch has no branch column.
func (s *Store) Branch(ctx context.Context, id []byte) (*Branch, error) {
	treeID := IDOf(id)
	if treeID < 1 {
		return nil, fmt.Errorf("%w: Invalid Tree ID", ErrInvalid)
	}
	var re strings.Builder
	for _, c := range id {
		fmt.Fprintf(&re, `\x%02x`, c)
	}
	re.WriteString(`(?:.{4})?`)
	stop := []byte{byte((treeID + 1) >> 8), byte(treeID + 1)}
	if treeID == MaxID {
		stop = []byte{0xFF, 0xFF, 0xFF}
	}
	sc := s.t.Scan(ctx, &storage.ScanOptions{Start: id, Stop: stop, RowRegex: re.String(), ReadOptions: *familyOnly})
	defer sc.Close()
	var b *Branch
	var children []*Branch
	var leaves []*Leaf
	for sc.Next() {
		r := sc.Row()
		own := bytes.Equal(r.Key, id)
		for _, c := range r.Cells {
			switch {
			case bytes.Equal(c.Qualifier, qualBranch):
				br, err := decodeStoredBranch(treeID, c.Value)
				if err != nil {
					return nil, fmt.Errorf("tree: branch %X: %w", r.Key, err)
				}
				if own {
					b = br
				} else {
					children = append(children, br)
				}
			case own && bytes.HasPrefix(c.Qualifier, prefixLeaf):
				l, err := decodeStoredLeaf(c.Value)
				if err != nil {
					return nil, fmt.Errorf("tree: leaf %X in %X: %w", c.Qualifier, r.Key, err)
				}
				if l.TSUID != "" {
					leaves = append(leaves, l)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tree: read branch %X: %w", id, err)
	}
	if b == nil {
		return nil, ErrNotFound
	}
	for _, c := range children {
		b.addChild(c)
	}
	for _, l := range leaves {
		b.insertLeaf(l)
	}
	return b, nil
}

// Collisions reads a tree's collisions (TSUID → the TSUID it collided
// with), only those of tsuids when given (hex).
func (s *Store) Collisions(ctx context.Context, id int, tsuids []string) (map[string]string, error) {
	return s.failures(ctx, id, collisionRow, prefixCollision, tsuids)
}

// NotMatched reads a tree's not-matched series (TSUID → the rules they
// failed), only those of tsuids when given (hex).
func (s *Store) NotMatched(ctx context.Context, id int, tsuids []string) (map[string]string, error) {
	return s.failures(ctx, id, notMatchedRow, prefixNotMatched, tsuids)
}

func (s *Store) failures(ctx context.Context, id int, suffix byte, prefix []byte, tsuids []string) (map[string]string, error) {
	key, err := IDBytes(id)
	if err != nil {
		return nil, err
	}
	opts := &storage.ReadOptions{Families: []string{Family}}
	for _, h := range tsuids {
		b, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		opts.Qualifiers = append(opts.Qualifiers, append(bytes.Clone(prefix), b...))
	}
	cells, err := s.t.Get(ctx, append(key, suffix), opts)
	out := map[string]string{}
	if errors.Is(err, storage.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tree: read failures: %w", err)
	}
	for _, c := range cells {
		if len(c.Qualifier) > len(prefix) && bytes.HasPrefix(c.Qualifier, prefix) {
			out[strings.ToUpper(hex.EncodeToString(c.Qualifier[len(prefix):]))] = latin1(c.Value)
		}
	}
	return out, nil
}

// latin1 reads ISO-8859-1 bytes, as OpenTSDB reads these values.
func latin1(b []byte) string {
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}

// putFailures writes collisions or not-matched entries, each value in
// ISO-8859-1 (characters above U+00FF become '?', as Java's encoder
// writes them).
func (s *Store) putFailures(ctx context.Context, id int, suffix byte, prefix []byte, m map[string]string) error {
	if len(m) == 0 {
		return nil
	}
	key, err := IDBytes(id)
	if err != nil {
		return err
	}
	cells := make([]storage.Cell, 0, len(m))
	for tsuid, v := range m {
		b, err := hex.DecodeString(tsuid)
		if err != nil {
			return fmt.Errorf("tree: TSUID %q: %w", tsuid, err)
		}
		cells = append(cells, storage.Cell{Family: Family, Qualifier: append(bytes.Clone(prefix), b...), Value: toLatin1(v)})
	}
	if err := s.t.Put(ctx, append(key, suffix), cells); err != nil {
		return fmt.Errorf("tree: store failures of tree %d: %w", id, err)
	}
	return nil
}

func toLatin1(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xFF {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// storeBranch writes a branch column unless one is there, and its leaves
// unless each is there; a leaf whose column holds another TSUID is a
// collision, returned as TSUID → the TSUID there.
func (s *Store) storeBranch(ctx context.Context, b *Branch, collisions map[string]string) error {
	key := b.ID()
	err := s.t.CheckAndPut(ctx, key, Family, qualBranch, nil,
		[]storage.Cell{{Family: Family, Qualifier: qualBranch, Value: b.appendStorageJSON(nil)}})
	if err != nil && !errors.Is(err, storage.ErrConflict) {
		return fmt.Errorf("tree: store branch %X: %w", key, err)
	}
	for _, l := range b.Leaves {
		if err := s.storeLeaf(ctx, key, l, collisions); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) storeLeaf(ctx context.Context, branch []byte, l *Leaf, collisions map[string]string) error {
	q := leafQualifier(l.DisplayName)
	err := s.t.CheckAndPut(ctx, branch, Family, q, nil, []storage.Cell{{Family: Family, Qualifier: q, Value: l.appendStorageJSON(nil)}})
	if err == nil {
		return nil
	}
	if !errors.Is(err, storage.ErrConflict) {
		return fmt.Errorf("tree: store leaf in %X: %w", branch, err)
	}
	cells, err := s.t.Get(ctx, branch, &storage.ReadOptions{Families: []string{Family}, Qualifiers: [][]byte{q}})
	if err != nil {
		return fmt.Errorf("tree: read leaf in %X: %w", branch, err)
	}
	old, err := decodeStoredLeaf(cells[0].Value)
	if err != nil {
		return fmt.Errorf("tree: leaf in %X: %w", branch, err)
	}
	if old.TSUID != l.TSUID {
		if _, ok := collisions[l.TSUID]; !ok {
			collisions[l.TSUID] = old.TSUID
		}
	}
	return nil
}

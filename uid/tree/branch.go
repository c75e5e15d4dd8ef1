package tree

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// Row and column names of the tree table (doc.go).
const (
	// Family is the tree table's one column family.
	Family = "t"
	// DefaultTable is OpenTSDB's tsd.storage.hbase.tree_table default.
	DefaultTable = "tsdb-tree"

	idWidth        = 2
	collisionRow   = 0x01
	notMatchedRow  = 0x02
	rootName       = "ROOT"
	branchIDLength = 4
)

var (
	qualTree         = []byte("tree")
	qualBranch       = []byte("branch")
	prefixRule       = []byte("tree_rule:")
	prefixLeaf       = []byte("leaf:")
	prefixCollision  = []byte("tree_collision:")
	prefixNotMatched = []byte("tree_not_matched:")
)

// IDBytes is a tree id's 2-byte row key (Tree.idToBytes).
func IDBytes(id int) ([]byte, error) {
	if id < 1 || id > MaxID {
		return nil, fmt.Errorf("%w: Invalid Tree ID", ErrInvalid)
	}
	return []byte{byte(id >> 8), byte(id)}, nil
}

// IDOf reads the tree id at the start of a row key (Tree.bytesToId).
func IDOf(key []byte) int {
	if len(key) < idWidth {
		return 0
	}
	return int(binary.BigEndian.Uint16(key))
}

// JavaHash is Java's String.hashCode: h = 31h + c over the UTF-16 code
// units of s.
func JavaHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + int32(hi)
			h = 31*h + int32(lo)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// ruleQualifier is tree_rule:<level>:<order>.
func ruleQualifier(level, order int) []byte {
	q := append([]byte(nil), prefixRule...)
	q = strconv.AppendInt(q, int64(level), 10)
	q = append(q, ':')
	return strconv.AppendInt(q, int64(order), 10)
}

// leafQualifier is leaf: and the hash of the leaf's display name.
func leafQualifier(name string) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), prefixLeaf...), uint32(JavaHash(name)))
}

// Branch is a node of a tree: its path from the root (depth 0, "ROOT") to
// itself, its child branches and its leaves.
type Branch struct {
	TreeID      int
	DisplayName string
	// Path holds the display names from the root (index 0) to this
	// branch.
	Path []string
	// Branches are the children, sorted by display name ignoring case;
	// nil when there are none.
	Branches []*Branch
	// Leaves are sorted by display name ignoring case; nil when none.
	Leaves []*Leaf
	// leafByHash finds a leaf by its qualifier's hash while building.
	leafByHash map[int32]*Leaf
}

// Leaf is a series filed under a branch.
type Leaf struct {
	DisplayName string
	TSUID       string // upper-case hex
	// Metric and Tags are the names the TSUID resolves to, filled by the
	// reader for answers; empty in storage.
	Metric string
	Tags   map[string]string
}

// newRoot returns the root branch of a tree.
func newRoot(treeID int) *Branch {
	return &Branch{TreeID: treeID, DisplayName: rootName, Path: []string{rootName}}
}

// ID is the branch's row key: the tree id, then the hash of each display
// name on its path below the root (Branch.compileBranchId).
func (b *Branch) ID() []byte {
	id := []byte{byte(b.TreeID >> 8), byte(b.TreeID)}
	for _, n := range b.Path[1:] {
		id = binary.BigEndian.AppendUint32(id, uint32(JavaHash(n)))
	}
	return id
}

// IDString is ID in upper-case hex.
func (b *Branch) IDString() string { return strings.ToUpper(hex.EncodeToString(b.ID())) }

// Depth is the branch's distance from the root.
func (b *Branch) Depth() int { return len(b.Path) - 1 }

// setParentPath makes b a child of the branch whose path is parent
// (prependParentPath then compileBranchId).
func (b *Branch) setParentPath(parent []string) {
	b.Path = append(slices.Clip(parent), b.DisplayName)
}

// addChild adds a child unless one of the same display name is there
// (Branch.addChild: a TreeSet ordered ignoring case); it reports whether
// it did.
func (b *Branch) addChild(c *Branch) bool {
	i, found := slices.BinarySearchFunc(b.Branches, c, cmpBranch)
	if found {
		return false
	}
	b.Branches = slices.Insert(b.Branches, i, c)
	return true
}

func cmpBranch(a, c *Branch) int { return compareIgnoreCase(a.DisplayName, c.DisplayName) }

// compareIgnoreCase is Java's String.compareToIgnoreCase.
func compareIgnoreCase(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		ca, cb := ua[i], ub[i]
		if ca == cb {
			continue
		}
		ca, cb = foldUnit(ca), foldUnit(cb)
		if ca != cb {
			return int(ca) - int(cb)
		}
	}
	return len(ua) - len(ub)
}

func foldUnit(c uint16) uint16 {
	u := []rune(strings.ToUpper(string(rune(c))))
	l := []rune(strings.ToLower(string(u[0])))
	return uint16(l[0])
}

// addLeaf adds a leaf unless one of the same display name is there; when
// that one has another TSUID, it returns the TSUID already there (a
// collision).
func (b *Branch) addLeaf(l *Leaf) (added bool, collidedWith string) {
	h := JavaHash(l.DisplayName)
	if old, ok := b.leafByHash[h]; ok {
		if old.TSUID != l.TSUID {
			return false, old.TSUID
		}
		return false, ""
	}
	if b.leafByHash == nil {
		b.leafByHash = map[int32]*Leaf{}
	}
	b.leafByHash[h] = l
	b.insertLeaf(l)
	return true, ""
}

// insertLeaf adds l to the sorted leaves; one whose display name equals
// another's ignoring case is left out, as OpenTSDB's TreeSet leaves it.
func (b *Branch) insertLeaf(l *Leaf) {
	i, found := slices.BinarySearchFunc(b.Leaves, l, func(a, c *Leaf) int { return compareIgnoreCase(a.DisplayName, c.DisplayName) })
	if !found {
		b.Leaves = slices.Insert(b.Leaves, i, l)
	}
}

// appendStorageJSON is the branch column's value (Branch.toStorageJson).
func (b *Branch) appendStorageJSON(dst []byte) []byte {
	dst = append(dst, `{"path":`...)
	dst = appendPath(dst, b.Path)
	dst = append(dst, `,"displayName":`...)
	dst = jsonw.Jackson.AppendString(dst, b.DisplayName)
	return append(dst, '}')
}

func appendPath(dst []byte, path []string) []byte {
	dst = append(dst, '{')
	for i, n := range path {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(i), 10)
		dst = append(dst, `":`...)
		dst = jsonw.Jackson.AppendString(dst, n)
	}
	return append(dst, '}')
}

// AppendJSON appends the branch as /api/tree/branch answers it.
func (b *Branch) AppendJSON(dst []byte) []byte {
	m := jsonw.Jackson
	dst = append(dst, `{"leaves":`...)
	if b.Leaves == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, l := range b.Leaves {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = l.AppendJSON(dst)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"branches":`...)
	if b.Branches == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, c := range b.Branches {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = c.AppendJSON(dst)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"path":`...)
	dst = appendPath(dst, b.Path)
	dst = append(dst, `,"treeId":`...)
	dst = strconv.AppendInt(dst, int64(b.TreeID), 10)
	dst = append(dst, `,"displayName":`...)
	dst = m.AppendString(dst, b.DisplayName)
	dst = append(dst, `,"branchId":`...)
	dst = m.AppendString(dst, b.IDString())
	dst = append(dst, `,"depth":`...)
	dst = strconv.AppendInt(dst, int64(b.Depth()), 10)
	return append(dst, '}')
}

// AppendJSON appends the leaf as OpenTSDB's answers show it.
func (l *Leaf) AppendJSON(dst []byte) []byte {
	m := jsonw.Jackson
	dst = append(dst, `{"metric":`...)
	dst = m.AppendString(dst, l.Metric)
	dst = append(dst, `,"tags":`...)
	if l.Tags == nil {
		dst = append(dst, "null"...)
	} else {
		dst = m.AppendSortedMap(dst, l.Tags)
	}
	dst = append(dst, `,"tsuid":`...)
	dst = m.AppendString(dst, l.TSUID)
	dst = append(dst, `,"displayName":`...)
	dst = m.AppendString(dst, l.DisplayName)
	return append(dst, '}')
}

// appendStorageJSON is a leaf column's value (Leaf.toStorageJson).
func (l *Leaf) appendStorageJSON(dst []byte) []byte {
	dst = append(dst, `{"displayName":`...)
	dst = jsonw.Jackson.AppendString(dst, l.DisplayName)
	dst = append(dst, `,"tsuid":`...)
	dst = jsonw.Jackson.AppendString(dst, l.TSUID)
	return append(dst, '}')
}

// decodeStoredBranch reads a branch column.
func decodeStoredBranch(treeID int, raw []byte) (*Branch, error) {
	var v struct {
		Path        map[string]string `json:"path"`
		DisplayName string            `json:"displayName"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	b := &Branch{TreeID: treeID, DisplayName: v.DisplayName}
	depths := make([]int, 0, len(v.Path))
	for k := range v.Path {
		d, err := strconv.Atoi(k)
		if err != nil || d < 0 || d > len(v.Path) {
			return nil, fmt.Errorf("branch path depth %q", k)
		}
		depths = append(depths, d)
	}
	slices.Sort(depths)
	for _, d := range depths {
		b.Path = append(b.Path, v.Path[strconv.Itoa(d)])
	}
	if n := len(b.Path); n == 0 || b.Path[n-1] != b.DisplayName {
		b.Path = append(b.Path, b.DisplayName) // compileBranchId adds it
	}
	return b, nil
}

// decodeStoredLeaf reads a leaf column.
func decodeStoredLeaf(raw []byte) (*Leaf, error) {
	var v struct {
		DisplayName string `json:"displayName"`
		TSUID       string `json:"tsuid"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return &Leaf{DisplayName: v.DisplayName, TSUID: v.TSUID}, nil
}

// ParseBranchID reads a branch id in hex (Branch.stringToId): at least 4
// digits, an odd count padded with a leading 0.
func ParseBranchID(s string) ([]byte, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: Branch ID was empty", ErrInvalid)
	}
	if len(s) < 4 {
		return nil, fmt.Errorf("%w: Branch ID was too short", ErrInvalid)
	}
	if len(s)%2 != 0 {
		s = "0" + s
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return b, nil
}

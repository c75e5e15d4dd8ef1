package uid

import "github.com/tsd-db/tsd/storage"

// Families of the UID table.
const (
	// FamilyID holds forward maps (name row → UID) and the MAXID counters.
	FamilyID = "id"
	// FamilyName holds reverse maps (UID row → name) and UIDMeta.
	FamilyName = "name"
)

// MaxIDRow is the row key of the MAXID counters, a single zero byte.
// Callers must not modify it.
var MaxIDRow = []byte{0}

var famIDs = []string{FamilyID}
var famNames = []string{FamilyName}

// Per-kind read options, shared because the storage contract never retains
// or modifies what it is passed.
var (
	forwardRead [NumKinds]*storage.ReadOptions
	reverseRead [NumKinds]*storage.ReadOptions
)

func init() {
	for _, k := range Kinds {
		forwardRead[k] = &storage.ReadOptions{Families: famIDs, Qualifiers: [][]byte{kindQuals[k]}}
		reverseRead[k] = &storage.ReadOptions{Families: famNames, Qualifiers: [][]byte{kindQuals[k]}}
	}
}

// TableSpec returns the UID table's layout as OpenTSDB creates it: families
// id and name, one version each, no TTL.
func TableSpec(name string) storage.TableSpec {
	return storage.TableSpec{Name: name, Families: []storage.FamilySpec{
		{Name: FamilyID, MaxVersions: 1},
		{Name: FamilyName, MaxVersions: 1},
	}}
}

// checkSpec verifies that an opened table has the UID families.
func checkSpec(spec storage.TableSpec) error {
	for _, f := range []string{FamilyID, FamilyName} {
		if _, ok := spec.Family(f); !ok {
			return storage.Invalidf("table %q is not a UID table: no family %q", spec.Name, f)
		}
	}
	return nil
}

// forwardCell is the cell of a forward map: name row, family id.
func forwardCell(k Kind, id []byte) storage.Cell {
	return storage.Cell{Family: FamilyID, Qualifier: kindQuals[k], Value: id}
}

// reverseCell is the cell of a reverse map: UID row, family name.
func reverseCell(k Kind, stored []byte) storage.Cell {
	return storage.Cell{Family: FamilyName, Qualifier: kindQuals[k], Value: stored}
}

package uid

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
)

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

// MaxIDProbe returns the probe with which the settings record refuses to
// adopt an OpenTSDB store on guessed settings (schema.CheckRecord): a UID
// table with a MAXID row holds OpenTSDB's data. A nil tbl finds nothing.
func MaxIDProbe(tbl storage.Table) schema.OpenTSDBProbe {
	if tbl == nil {
		return nil
	}
	return func(ctx context.Context) (string, bool, error) {
		name := tbl.Spec().Name
		cells, err := tbl.Get(ctx, MaxIDRow, &storage.ReadOptions{Families: famIDs})
		if errors.Is(err, storage.ErrNotFound) {
			return name, false, nil
		}
		if err != nil {
			return name, false, fmt.Errorf("look for a MAXID row in %q: %w", name, err)
		}
		return name, len(cells) > 0, nil
	}
}

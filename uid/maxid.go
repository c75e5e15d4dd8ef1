package uid

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// MaxIDs reads the MAXID counters: the highest ID assigned of each kind
// (0 for a kind none was assigned of), as OpenTSDB's UniqueId.getUsedUIDs
// reports them for its uid.ids-used stat.
func (u *UIDs) MaxIDs(ctx context.Context) ([NumKinds]ID, error) {
	var ids [NumKinds]ID
	cells, err := u.tbl.Get(ctx, MaxIDRow, &storage.ReadOptions{Families: famIDs})
	if errors.Is(err, storage.ErrNotFound) {
		return ids, nil
	}
	if err != nil {
		return ids, fmt.Errorf("read MAXID: %w", err)
	}
	for _, c := range cells {
		for _, k := range Kinds {
			if bytes.Equal(c.Qualifier, kindQuals[k]) && len(c.Value) == 8 {
				ids[k] = ID(binary.BigEndian.Uint64(c.Value))
			}
		}
	}
	return ids, nil
}

package uid

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsd-db/tsd/storage"
)

// Rename gives the UID of oldName the name newName (OpenTSDB's
// UniqueId.rename): it fails if newName already has a UID. It writes the
// reverse map first, then the new forward map, then deletes the old forward
// map, so a crash leaves at worst a second forward map that fsck reports.
// Other processes keep the old name in their caches until DropCaches.
func (u *UIDs) Rename(ctx context.Context, kind Kind, oldName, newName string) error {
	if !kind.Valid() {
		return fmt.Errorf("uid rename: invalid kind %d", kind)
	}
	oldRow, id, err := u.forwardOf(ctx, kind, oldName)
	if err != nil {
		return fmt.Errorf("uid rename %s %q: %w", kind, oldName, err)
	}
	newRow, err := u.storedName(kind, newName)
	if err != nil {
		return fmt.Errorf("uid rename %s %q: %w", kind, oldName, err)
	}
	_, exists, err := u.readForward(ctx, kind, newRow)
	if err != nil {
		return fmt.Errorf("uid rename %s %q: %w", kind, oldName, err)
	}
	if exists {
		return fmt.Errorf("%w: an UID with name %q for %s already exists", ErrNameExists, newName, kind)
	}
	uidBytes := u.AppendID(nil, kind, id)
	if err := u.putRetry(ctx, uidBytes, reverseCell(kind, newRow)); err != nil {
		return fmt.Errorf("uid rename %s %q: write reverse map: %w", kind, oldName, err)
	}
	if err := u.claimForward(ctx, kind, newRow, uidBytes, oldRow); err != nil {
		return fmt.Errorf("uid rename %s %q to %q: %w", kind, oldName, newName, err)
	}
	if err := u.deleteRetry(ctx, oldRow, forwardColumn(kind)); err != nil {
		return fmt.Errorf("uid rename %s %q: delete old forward map: %w", kind, oldName, err)
	}
	u.uncache(kind, oldName, id)
	u.cacheBoth(kind, newName, id)
	return nil
}

// claimForward writes the new forward map unless the name appeared since
// the check; then the reverse map is put back to the old name.
func (u *UIDs) claimForward(ctx context.Context, kind Kind, newRow, uidBytes, oldRow []byte) error {
	err := u.withRetry(ctx, func() error {
		return u.tbl.CheckAndPut(ctx, newRow, FamilyID, kindQuals[kind], nil, []storage.Cell{forwardCell(kind, uidBytes)})
	})
	if !errors.Is(err, storage.ErrConflict) {
		return err
	}
	if rerr := u.putRetry(ctx, uidBytes, reverseCell(kind, oldRow)); rerr != nil {
		return fmt.Errorf("%w: the name appeared meanwhile, and restoring the reverse map failed: %v", ErrNameExists, rerr)
	}
	return fmt.Errorf("%w: the name was assigned meanwhile", ErrNameExists)
}

// Delete removes name's forward map, its UID's reverse map and UIDMeta
// (OpenTSDB's `uid delete`). MAXID is not decremented, so the UID is never
// reused. Data written with the UID stays; other processes keep the name
// cached until DropCaches.
func (u *UIDs) Delete(ctx context.Context, kind Kind, name string) error {
	if !kind.Valid() {
		return fmt.Errorf("uid delete: invalid kind %d", kind)
	}
	row, id, err := u.forwardOf(ctx, kind, name)
	if err != nil {
		return fmt.Errorf("uid delete %s %q: %w", kind, name, err)
	}
	if err := u.deleteRetry(ctx, row, forwardColumn(kind)); err != nil {
		return fmt.Errorf("uid delete %s %q: forward map: %w", kind, name, err)
	}
	uidBytes := u.AppendID(nil, kind, id)
	err = u.deleteRetry(ctx, uidBytes, reverseColumn(kind),
		storage.Deletion{Kind: storage.DeleteColumn, Family: FamilyName, Qualifier: kindMetaQuals[kind]})
	if err != nil {
		return fmt.Errorf("uid delete %s %q: reverse map %x: %w", kind, name, uidBytes, err)
	}
	u.uncache(kind, name, id)
	return nil
}

// forwardOf reads a name's forward map from storage, bypassing the cache
// (which may be stale after another process renamed or deleted it).
func (u *UIDs) forwardOf(ctx context.Context, kind Kind, name string) ([]byte, ID, error) {
	if name == "" {
		return nil, 0, &NameError{Kind: kind, Empty: true}
	}
	row, err := EncodeName(u.opts.Format, nil, []byte(name))
	if err != nil {
		return nil, 0, err
	}
	id, found, err := u.readForward(ctx, kind, row)
	if err != nil {
		return nil, 0, err
	}
	if !found {
		return nil, 0, &NoSuchNameError{Kind: kind, Name: name}
	}
	return row, id, nil
}

func forwardColumn(kind Kind) storage.Deletion {
	return storage.Deletion{Kind: storage.DeleteColumn, Family: FamilyID, Qualifier: kindQuals[kind]}
}

func reverseColumn(kind Kind) storage.Deletion {
	return storage.Deletion{Kind: storage.DeleteColumn, Family: FamilyName, Qualifier: kindQuals[kind]}
}

func (u *UIDs) putRetry(ctx context.Context, row []byte, cells ...storage.Cell) error {
	return u.withRetry(ctx, func() error { return u.tbl.Put(ctx, row, cells) })
}

func (u *UIDs) deleteRetry(ctx context.Context, row []byte, dels ...storage.Deletion) error {
	return u.withRetry(ctx, func() error { return u.tbl.Delete(ctx, row, dels...) })
}

package meta

import (
	"context"
	"errors"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// Options configure a Service. Both fields are required.
type Options struct {
	// UIDs is the UID table the names resolve through.
	UIDs *uid.UIDs
	// Index is the series index lookups read.
	Index *index.Index
}

// Validate reports a missing field.
func (o *Options) Validate() error {
	switch {
	case o.UIDs == nil:
		return errors.New("meta: Options.UIDs is nil")
	case o.Index == nil:
		return errors.New("meta: Options.Index is nil")
	}
	return nil
}

// Service answers metadata questions from the UID table and the series
// index. It is safe for concurrent use and owns no goroutine.
type Service struct {
	uids  *uid.UIDs
	index *index.Index
}

// New returns a Service.
func New(opts Options) (*Service, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Service{uids: opts.UIDs, index: opts.Index}, nil
}

// UIDs returns the UID table, for the endpoints that need only it
// (suggest, uid assign, rename and uidmeta).
func (s *Service) UIDs() *uid.UIDs { return s.uids }

// DropCaches empties the UID caches and the names the index cached for
// matching (OpenTSDB's /api/dropcaches), so renames and deletions made by
// other daemons are seen.
func (s *Service) DropCaches() {
	s.uids.DropCaches()
	s.index.DropCaches()
}

// Rename gives oldName's UID the name newName (uid.UIDs.Rename) and makes
// the index forget the names it cached for matching, so filters see the
// new name at once.
func (s *Service) Rename(ctx context.Context, kind uid.Kind, oldName, newName string) error {
	if err := s.uids.Rename(ctx, kind, oldName, newName); err != nil {
		return err
	}
	s.index.DropCaches()
	return nil
}

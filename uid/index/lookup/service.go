package lookup

import (
	"context"
	"errors"

	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
	"github.com/tsd-db/tsd/uid/tsmeta"
)

// Options configure a Service. UIDs and Index are required.
type Options struct {
	// UIDs is the UID table the names resolve through.
	UIDs *uid.UIDs
	// Index is the series index lookups read.
	Index *index.Index
	// NameCaches are other caches of names by UID (PromQL's label sets),
	// emptied with the UID caches and after a rename. Default none.
	NameCaches []NameCache
	// TSMeta is the store of series' TSMeta; nil leaves /api/uid/tsmeta
	// and the TSMeta searches without one (ErrNoTSMetaStore).
	TSMeta *tsmeta.Store
}

// NameCache is a cache of names by UID that must forget them when a name
// changes.
type NameCache interface {
	// DropCaches empties the cache.
	DropCaches()
}

// Validate reports a missing field.
func (o *Options) Validate() error {
	switch {
	case o.UIDs == nil:
		return errors.New("lookup: Options.UIDs is nil")
	case o.Index == nil:
		return errors.New("lookup: Options.Index is nil")
	}
	return nil
}

// Service answers metadata questions from the UID table and the series
// index. It is safe for concurrent use and owns no goroutine.
type Service struct {
	uids   *uid.UIDs
	index  *index.Index
	caches []NameCache
	meta   *tsmeta.Store
}

// New returns a Service.
func New(opts Options) (*Service, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Service{uids: opts.UIDs, index: opts.Index, caches: opts.NameCaches, meta: opts.TSMeta}, nil
}

// UIDs returns the UID table, for the endpoints that need only it
// (suggest, uid assign, rename and uidmeta).
func (s *Service) UIDs() *uid.UIDs { return s.uids }

// DropCaches empties the UID caches and the names the index cached for
// matching (OpenTSDB's /api/dropcaches), so renames and deletions made by
// other daemons are seen.
func (s *Service) DropCaches() {
	s.uids.DropCaches()
	s.dropNames()
}

// dropNames empties every cache of names other than the UID table's own.
func (s *Service) dropNames() {
	s.index.DropCaches()
	for _, c := range s.caches {
		c.DropCaches()
	}
}

// Rename gives oldName's UID the name newName (uid.UIDs.Rename) and makes
// the index and the other name caches forget the names they cached, so
// filters and PromQL's labels see the new name at once.
func (s *Service) Rename(ctx context.Context, kind uid.Kind, oldName, newName string) error {
	if err := s.uids.Rename(ctx, kind, oldName, newName); err != nil {
		return err
	}
	s.dropNames()
	return nil
}

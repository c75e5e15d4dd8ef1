package head

import (
	"context"
	"encoding/binary"

	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/uid"
)

// DefaultNameCacheSize is the number of series a NameAppender remembers.
const DefaultNameCacheSize = 1 << 16

// NameAppender appends points given by name, as the protocol parsers hand
// them over: it resolves the metric and tags to a series through the UID
// table and remembers the result by name, so a series seen before costs one
// hash lookup rather than a UID lookup per name. Use one per connection, as
// Appender; not safe for concurrent use.
//
// A point naming a name this process has not cached, of a kind that
// auto-creates, is not resolved on the spot (a new name costs several
// synced store writes): it is validated, then deferred, and the deferred
// points' names are resolved together by uid.UIDs.ResolveBatch when
// DeferredPoints points or DeferredNames distinct names wait, or at Commit,
// and the points appended in their order. While points wait, every point
// that misses the series cache waits behind them, so a series' points keep
// their order.
//
// The cache holds up to its size of series, keyed by the names in the
// order given, and is emptied whole when full. Like the UID caches it does
// not see another daemon's UID renames or deletes until DropCache (called
// with uid.UIDs.DropCaches).
//
// With the head's series limits on (HeadOptions.SeriesLimits), a series
// is admitted by the limiter when it misses the cache, before any of its
// new names gets a UID, so a refused series costs no UID and no head
// memory; a cached series is checked again only when the limiter's epoch
// has moved (once per window slot), so its points cost one atomic load.
type NameAppender struct {
	a       *Appender
	u       *uid.UIDs
	w       series.Widths
	maxTags int
	// refs maps a cache key to its entry in ents; keys maps a decoder's
	// Key (AppendKeyed) to its entry, a series appended by Key being
	// remembered under that Key only.
	refs map[string]int32
	keys map[string]int32
	// keyBytes is the size of keys' keys, within maxKeyBytes.
	keyBytes int
	ents     []nameEntry
	// last is the entry AppendKnown appended to last (-1: none). A
	// collector sends its series in the same order every interval, so
	// the entry that followed last the time before (nameEntry.next) is
	// tried before the hash of the Key: one comparison instead of hashing
	// a line's names (a telnet Key is the whole line before its
	// timestamp) and probing a map too large for the CPU's caches.
	last int32
	max  int
	name []byte // cache key scratch
	key  []byte // series key scratch
	memo nameMemo
	d    deferral
	lim  limitState
	// err is the failure of a deferred batch: its points are lost, so
	// Commit must fail; Append returns it until Commit or Rollback.
	err error
}

// nameEntry is a cached series.
type nameEntry struct {
	ref SeriesRef
	// hash identifies the series to the series limits and epoch is the
	// limiter epoch it was last admitted in (both 0 when limits are off).
	hash, epoch uint64
	// dkey is the Key the entry is remembered under in keys ("" for
	// none), and next the entry AppendKnown appended to after this one
	// last time (-1: none).
	dkey string
	next int32
}

// NameAppender returns an appender resolving names through u, remembering
// up to cacheSize series (DefaultNameCacheSize when 0). u's widths must be
// the head's.
func (h *Head) NameAppender(u *uid.UIDs, cacheSize int) *NameAppender {
	if cacheSize <= 0 {
		cacheSize = DefaultNameCacheSize
	}
	return &NameAppender{a: h.Appender(), u: u, w: h.opts.Widths, maxTags: h.opts.MaxTags,
		refs: make(map[string]int32), keys: make(map[string]int32), max: cacheSize, last: -1, lim: limitState{l: h.limiter}}
}

// Append adds p to the series named by metric and tags and returns its
// reference, or 0 when the point is deferred until its new names are
// assigned (see NameAppender). On a cache miss tags are sorted in place by
// key (see uid.ResolvePoint). Errors about the point itself (invalid,
// unknown or duplicate names, too many tags, a point out of bounds) come
// back here, at once, and so does a series limit's refusal (a
// *SeriesLimitError); a store failure may come back here or from Commit.
// The point is neither durable nor visible until Commit. metric and tags
// are not retained.
func (n *NameAppender) Append(ctx context.Context, metric []byte, tags []uid.Tag, p series.Point) (SeriesRef, error) {
	return n.AppendKeyed(ctx, nil, metric, tags, p)
}

// AppendKnown appends p to the series remembered under key, a decoder's
// Key for it (parse.Point.Key), and returns its reference; ok is false,
// and nothing is done, when no series is remembered under key (append it
// by its names with AppendKeyed then). Its names are neither read nor
// checked: they were when the series was remembered.
func (n *NameAppender) AppendKnown(key []byte, p series.Point) (ref SeriesRef, ok bool, err error) {
	if n.err != nil {
		return 0, true, n.err
	}
	i := n.predicted(key)
	if i < 0 {
		var ok bool
		if i, ok = n.keys[string(key)]; !ok {
			n.last = -1
			return 0, false, nil
		}
		if n.last >= 0 {
			n.ents[n.last].next = i
		}
	}
	n.last = i
	ref, err = n.appendEntry(&n.ents[i], p)
	return ref, true, err
}

// predicted returns the entry that followed the last one AppendKnown
// appended to, when it is remembered under key; else -1.
func (n *NameAppender) predicted(key []byte) int32 {
	if n.last < 0 {
		return -1
	}
	j := n.ents[n.last].next
	if j < 0 || n.ents[j].dkey == "" || n.ents[j].dkey != string(key) {
		return -1
	}
	return j
}

// AppendKeyed is Append for a point whose decoder gave it dkey (nil for
// none): a series appended at once is remembered under dkey, for
// AppendKnown (a deferred one is, when a later point of it is appended).
func (n *NameAppender) AppendKeyed(ctx context.Context, dkey, metric []byte, tags []uid.Tag, p series.Point) (SeriesRef, error) {
	if n.err != nil {
		return 0, n.err
	}
	n.name = appendNameKey(n.name[:0], metric, tags)
	if i, ok := n.refs[string(n.name)]; ok {
		ref, err := n.appendEntry(&n.ents[i], p)
		if err == nil && dkey != nil {
			n.rememberKey(dkey, i)
		}
		return ref, err
	}
	key, known, err := n.resolveKnown(ctx, n.key[:0], metric, tags)
	n.key = key
	if err != nil {
		return 0, err
	}
	if err := n.checkPoint(len(tags), p); err != nil {
		return 0, err
	}
	var adm admission
	if n.lim.l != nil {
		if adm, err = n.admit(metric, tags, key, known); err != nil {
			return 0, err
		}
	}
	if !known || len(n.d.points) > 0 {
		return 0, n.deferPoint(ctx, p, adm)
	}
	return n.appendResolved(key, p, adm, dkey)
}

// appendEntry appends p to a remembered series, admitted again when the
// series limits' epoch moved.
func (n *NameAppender) appendEntry(e *nameEntry, p series.Point) (SeriesRef, error) {
	if n.lim.l != nil && e.epoch != n.lim.l.epoch.Load() {
		if err := n.readmit(e); err != nil {
			return 0, err
		}
	}
	return e.ref, n.a.Append(e.ref, p)
}

// appendResolved appends p to the series of the resolved key and
// remembers the series under byKey, or under n.name when byKey is nil.
func (n *NameAppender) appendResolved(key []byte, p series.Point, adm admission, byKey []byte) (SeriesRef, error) {
	SortSeriesKey(key, n.w)
	ref, err := n.a.AppendKey(key, p)
	if err != nil {
		return 0, err
	}
	if len(n.ents) >= n.max {
		n.forgetSeries()
	}
	i := int32(len(n.ents))
	n.ents = append(n.ents, nameEntry{ref: ref, hash: adm.hash, epoch: adm.epoch, next: -1})
	if byKey == nil || !n.rememberKey(byKey, i) {
		n.refs[string(n.name)] = i
	}
	return ref, nil
}

// maxKeyBytes bounds the bytes of the Keys a NameAppender remembers: a
// Key is its series' names as the client wrote them, padding included (a
// telnet line's spaces), so its size is the client's choice.
const maxKeyBytes = 4 << 20

// rememberKey remembers entry i under a decoder's key and reports
// whether it did: not for a Key over maxKeyBytes/64, whose series is
// remembered by its names instead. The keys are emptied whole when full,
// as the names are.
func (n *NameAppender) rememberKey(key []byte, i int32) bool {
	if len(key) > maxKeyBytes/64 {
		return false
	}
	if len(n.keys) >= n.max || n.keyBytes+len(key) > maxKeyBytes {
		n.forgetKeys()
	}
	k := string(key)
	n.keys[k] = i
	n.ents[i].dkey = k
	n.keyBytes += len(key)
	return true
}

// forgetKeys empties keys, and the entries' copies of them, so that the
// bytes keyBytes bounds are freed.
func (n *NameAppender) forgetKeys() {
	clear(n.keys)
	n.keyBytes = 0
	for i := range n.ents {
		n.ents[i].dkey = ""
	}
	n.last = -1
}

// appendNameKey appends the cache key of a series' names: each name with
// its length before it, so no two series share a key.
func appendNameKey(dst, metric []byte, tags []uid.Tag) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(metric)))
	dst = append(dst, metric...)
	for _, t := range tags {
		dst = binary.AppendUvarint(dst, uint64(len(t.Key)))
		dst = append(dst, t.Key...)
		dst = binary.AppendUvarint(dst, uint64(len(t.Value)))
		dst = append(dst, t.Value...)
	}
	return dst
}

// Commit resolves the deferred points' new names (one batch per kind,
// with the context of the last deferred Append) and appends those points,
// then is Appender.Commit. On error no point since the last Commit or
// Rollback is acknowledged, and the appender is empty afterwards; a
// failure to resolve is the UID table's error (retryable when the store
// did not answer), as a failed resolution in Append is.
func (n *NameAppender) Commit(sync bool) error {
	err := n.err
	if err == nil && len(n.d.points) > 0 {
		err = n.flush(n.d.ctx)
	}
	if err != nil {
		n.Rollback()
		return err
	}
	err = n.a.Commit(sync)
	if n.lim.l != nil {
		n.endCommit(err == nil)
	}
	return err
}

// Sync returns once every point this appender committed is on stable
// storage (Appender.Sync); points not committed yet are not waited for.
func (n *NameAppender) Sync() error { return n.a.Sync() }

// Rollback drops the points waiting for Commit, deferred ones included.
func (n *NameAppender) Rollback() {
	n.a.Rollback()
	n.d.reset()
	n.err = nil
	if n.lim.l != nil {
		n.endCommit(false)
	}
}

// Len returns the number of points waiting for Commit, deferred ones
// included.
func (n *NameAppender) Len() int { return n.a.Len() + len(n.d.points) }

// DropCache forgets every remembered series.
func (n *NameAppender) DropCache() {
	n.forgetSeries()
	n.memo.reset()
}

// forgetSeries forgets every remembered series, keeping the name memo: a
// full cache is emptied so, the names still hold.
func (n *NameAppender) forgetSeries() {
	clear(n.refs)
	n.forgetKeys()
	n.ents = n.ents[:0]
}

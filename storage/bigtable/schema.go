package bigtable

import (
	"slices"
	"strings"
	"time"

	bt "cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/admin/apiv2/adminpb"

	"github.com/tsd-db/tsd/storage"
)

// gcPolicy is the garbage-collection policy that removes what a family's
// limits hide: a cell goes when it is beyond the newest MaxVersions OR older
// than TTL (a union). Bigtable stores max_age at microsecond granularity, so
// the TTL is rounded up to a whole microsecond: the server then never removes
// a cell the read-time filter still shows.
func gcPolicy(f storage.FamilySpec) bt.GCPolicy {
	var sub []bt.GCPolicy
	if f.MaxVersions > 0 {
		sub = append(sub, bt.MaxVersionsPolicy(f.MaxVersions))
	}
	if f.TTL > 0 {
		sub = append(sub, bt.MaxAgePolicy(ttlMicros(f.TTL)))
	}
	switch len(sub) {
	case 0:
		return bt.NoGcPolicy()
	case 1:
		return sub[0]
	}
	return bt.UnionPolicy(sub...)
}

// ttlMicros rounds d up to a whole microsecond.
func ttlMicros(d time.Duration) time.Duration {
	return (d + time.Microsecond - 1).Truncate(time.Microsecond)
}

// normalizeFamily returns f as it reads back from the server.
func normalizeFamily(f storage.FamilySpec) storage.FamilySpec {
	f.TTL = ttlMicros(f.TTL)
	return f
}

// limitsOf reads a server GC rule back into MaxVersions and TTL. A union
// keeps the tightest of each limit. An intersection (set by someone else)
// removes a cell only when all its parts agree, which no single pair of
// limits describes; it is read as no limit so that reads never hide a cell
// the server keeps.
func limitsOf(rule *adminpb.GcRule) (maxVersions int, ttl time.Duration) {
	switch r := rule.GetRule().(type) {
	case *adminpb.GcRule_MaxNumVersions:
		return int(r.MaxNumVersions), 0
	case *adminpb.GcRule_MaxAge:
		return 0, r.MaxAge.AsDuration()
	case *adminpb.GcRule_Union_:
		for _, sub := range r.Union.GetRules() {
			v, d := limitsOf(sub)
			maxVersions = tighter(maxVersions, v)
			ttl = time.Duration(tighter(int(ttl), int(d)))
		}
	}
	return maxVersions, ttl
}

// tighter returns the smaller positive limit; 0 means none.
func tighter(a, b int) int {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// specOf converts a table from the admin API into a TableSpec with
// families in name order.
func specOf(name string, t *adminpb.Table) storage.TableSpec {
	spec := storage.TableSpec{Name: name}
	for fam, cf := range t.GetColumnFamilies() {
		v, ttl := limitsOf(cf.GetGcRule())
		spec.Families = append(spec.Families, storage.FamilySpec{Name: fam, MaxVersions: v, TTL: ttl})
	}
	slices.SortFunc(spec.Families, func(a, b storage.FamilySpec) int { return strings.Compare(a.Name, b.Name) })
	return spec
}

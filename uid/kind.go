package uid

import "fmt"

// Kind is one of the three UID namespaces. Each has its own counter, width
// and caches.
type Kind uint8

const (
	// Metric is the namespace of metric names (qualifier "metrics").
	Metric Kind = iota
	// TagK is the namespace of tag keys (qualifier "tagk").
	TagK
	// TagV is the namespace of tag values (qualifier "tagv").
	TagV
)

// NumKinds is the number of kinds; kinds are 0..NumKinds-1.
const NumKinds = 3

// Kinds lists every kind in table order.
var Kinds = [NumKinds]Kind{Metric, TagK, TagV}

var (
	kindNames = [NumKinds]string{"metrics", "tagk", "tagv"}
	// kindQuals are the qualifiers as byte slices; the storage contract
	// never retains them, so one shared copy serves every call.
	kindQuals = [NumKinds][]byte{[]byte("metrics"), []byte("tagk"), []byte("tagv")}
	// kindMetaQuals are OpenTSDB's UIDMeta qualifiers: the lower-cased
	// UniqueIdType name, so "metric_meta", not "metrics_meta".
	kindMetaQuals = [NumKinds][]byte{[]byte("metric_meta"), []byte("tagk_meta"), []byte("tagv_meta")}
	kindWhat      = [NumKinds]string{"metric name", "tag name", "tag value"}
)

// String returns OpenTSDB's name of the kind, which is also its qualifier:
// "metrics", "tagk" or "tagv".
func (k Kind) String() string {
	if k.Valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is Metric, TagK or TagV.
func (k Kind) Valid() bool { return k < NumKinds }

// what names the kind in validation errors, as OpenTSDB's Tags does.
func (k Kind) what() string { return kindWhat[k] }

// ParseKind accepts "metrics" (or "metric"), "tagk" and "tagv".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "metrics", "metric":
		return Metric, nil
	case "tagk":
		return TagK, nil
	case "tagv":
		return TagV, nil
	}
	return 0, fmt.Errorf("unknown uid kind %q: want metrics, tagk or tagv", s)
}

package uid

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tsd-db/tsd/storage"
)

// ErrNoMetaChange: an update named no field to change (OpenTSDB answers
// 304 Not Modified).
var ErrNoMetaChange = errors.New("uid: no changes detected in UID meta data")

// metaTypeNames are OpenTSDB's UniqueIdType names, as UIDMeta JSON carries
// them in "type".
var metaTypeNames = [NumKinds]string{"METRIC", "TAGK", "TAGV"}

// MetaTypeName returns OpenTSDB's UniqueIdType name of kind: METRIC, TAGK
// or TAGV.
func MetaTypeName(kind Kind) string {
	if kind.Valid() {
		return metaTypeNames[kind]
	}
	return kind.String()
}

// ParseMetaType accepts what OpenTSDB's stringToUniqueIdType does: metric,
// metrics, tagk and tagv, ignoring case.
func ParseMetaType(s string) (Kind, error) {
	switch strings.ToLower(s) {
	case "metric", "metrics":
		return Metric, nil
	case "tagk":
		return TagK, nil
	case "tagv":
		return TagV, nil
	}
	return 0, &MetaTypeError{Type: s}
}

// MetaTypeError is a UID type ParseMetaType does not know.
type MetaTypeError struct{ Type string }

// Error returns OpenTSDB's text: Invalid type requested: <type>.
func (e *MetaTypeError) Error() string { return "Invalid type requested: " + e.Type }

// UIDMeta is OpenTSDB's UIDMeta: what users write about a metric, tag key
// or tag value. It is stored as JSON in the UID's row of the UID table,
// family name, qualifier metric_meta, tagk_meta or tagv_meta.
type UIDMeta struct {
	// UID is the UID in upper-case hex, W bytes.
	UID  string
	Kind Kind
	// Name is the UID's name, from its reverse map (never from the JSON).
	Name        string
	Description string
	Notes       string
	DisplayName string
	// Created is when the UID was created, Unix seconds; 0 when unknown.
	Created int64
	// Custom holds user key/value pairs; nil when there are none.
	Custom map[string]string
}

// MetaUpdate names the user fields an update changes; nil fields are
// left alone, unless the update overwrites (HTTP PUT), which resets them.
type MetaUpdate struct {
	Description, Notes, DisplayName *string
	// Custom replaces the custom map when CustomSet.
	Custom    map[string]string
	CustomSet bool
}

// empty reports whether the update names no field.
func (m *MetaUpdate) empty() bool {
	return m.Description == nil && m.Notes == nil && m.DisplayName == nil && !m.CustomSet
}

// metaJSON is the stored form, OpenTSDB's field names.
type metaJSON struct {
	UID         string            `json:"uid"`
	Type        string            `json:"type"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Notes       string            `json:"notes"`
	Created     int64             `json:"created"`
	Custom      map[string]string `json:"custom"`
	DisplayName string            `json:"displayName"`
}

func metaReadOptions(kind Kind) *storage.ReadOptions {
	return &storage.ReadOptions{Families: famNames, Qualifiers: [][]byte{kindQuals[kind], kindMetaQuals[kind]}}
}

// GetMeta returns the UIDMeta of id: the stored fields, or empty ones when
// none were stored. A UID without a name is ErrNoSuchID.
func (u *UIDs) GetMeta(ctx context.Context, kind Kind, id ID) (UIDMeta, error) {
	m, _, err := u.readMeta(ctx, kind, id)
	return m, err
}

// readMeta reads the reverse map and the meta cell of id; raw is the
// stored meta cell (nil when absent), for the check-and-put of an update.
func (u *UIDs) readMeta(ctx context.Context, kind Kind, id ID) (m UIDMeta, raw []byte, err error) {
	if !kind.Valid() {
		return m, nil, fmt.Errorf("uid meta: invalid kind %d", kind)
	}
	row := u.AppendID(nil, kind, id)
	m = UIDMeta{UID: strings.ToUpper(hex.EncodeToString(row)), Kind: kind}
	cells, err := u.get(ctx, row, metaReadOptions(kind))
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return m, nil, fmt.Errorf("uid meta %s %X: %w", kind, row, err)
	}
	named := false
	var namedAt int64 // µs
	for _, c := range cells {
		switch string(c.Qualifier) {
		case string(kindQuals[kind]):
			m.Name, named, namedAt = string(DecodeName(u.opts.Format, nil, c.Value)), true, c.Timestamp
		case string(kindMetaQuals[kind]):
			raw = c.Value
		}
	}
	if !named {
		return m, nil, &NoSuchIDError{Kind: kind, ID: row}
	}
	if raw != nil {
		err = u.decodeMeta(&m, row, raw)
	}
	if u.opts.CreatedFromName && m.Created == 0 && namedAt > 0 {
		m.Created = namedAt / 1_000_000
	}
	return m, raw, err
}

func (u *UIDs) decodeMeta(m *UIDMeta, row, raw []byte) error {
	var j metaJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return &storage.CorruptionError{Table: u.tbl.Spec().Name, Row: row, Qualifier: kindMetaQuals[m.Kind], Err: err}
	}
	m.Description, m.Notes, m.DisplayName = j.Description, j.Notes, j.DisplayName
	m.Created, m.Custom = j.Created, j.Custom
	return nil
}

// metaAttempts bounds the read-modify-write loop of UpdateMeta when other
// writers keep changing the cell.
const metaAttempts = 5

// UpdateMeta applies upd to the UIDMeta of id and returns the result
// (OpenTSDB's UIDMeta.syncToStorage): without overwrite only the named
// fields change (POST); with it every user field takes upd's value or its
// default (PUT). An update naming no field is ErrNoMetaChange. The cell is
// replaced with a check-and-put against what was read, so concurrent
// updates never lose each other's fields.
func (u *UIDs) UpdateMeta(ctx context.Context, kind Kind, id ID, upd MetaUpdate, overwrite bool) (UIDMeta, error) {
	if upd.empty() {
		return UIDMeta{}, ErrNoMetaChange
	}
	for attempt := 1; ; attempt++ {
		m, raw, err := u.readMeta(ctx, kind, id)
		if err != nil {
			return m, err
		}
		applyMeta(&m, &upd, overwrite)
		err = u.casMeta(ctx, kind, id, &m, raw)
		if err == nil || !errors.Is(err, storage.ErrConflict) || attempt >= metaAttempts {
			return m, err
		}
	}
}

func applyMeta(m *UIDMeta, upd *MetaUpdate, overwrite bool) {
	set := func(dst *string, v *string) {
		switch {
		case v != nil:
			*dst = *v
		case overwrite:
			*dst = ""
		}
	}
	set(&m.Description, upd.Description)
	set(&m.Notes, upd.Notes)
	set(&m.DisplayName, upd.DisplayName)
	if upd.CustomSet || overwrite {
		m.Custom = upd.Custom
	}
}

func (u *UIDs) casMeta(ctx context.Context, kind Kind, id ID, m *UIDMeta, expected []byte) error {
	v, err := json.Marshal(metaJSON{UID: m.UID, Type: MetaTypeName(kind), Name: m.Name,
		Description: m.Description, Notes: m.Notes, Created: m.Created, Custom: m.Custom, DisplayName: m.DisplayName})
	if err != nil {
		return err
	}
	row := u.AppendID(nil, kind, id)
	cell := storage.Cell{Family: FamilyName, Qualifier: kindMetaQuals[kind], Value: v}
	return u.withRetry(ctx, func() error {
		return u.tbl.CheckAndPut(ctx, row, FamilyName, kindMetaQuals[kind], expected, []storage.Cell{cell})
	})
}

// DeleteMeta removes the UIDMeta of id; the UID and its name stay. A UID
// without a name is ErrNoSuchID.
func (u *UIDs) DeleteMeta(ctx context.Context, kind Kind, id ID) error {
	if _, _, err := u.readMeta(ctx, kind, id); err != nil {
		return err
	}
	row := u.AppendID(nil, kind, id)
	return u.deleteRetry(ctx, row, storage.Deletion{Kind: storage.DeleteColumn, Family: FamilyName, Qualifier: kindMetaQuals[kind]})
}

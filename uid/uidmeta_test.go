package uid

import (
	"errors"
	"maps"
	"testing"
	"time"
)

func strp(s string) *string { return &s }

func TestUIDMeta(t *testing.T) {
	u := openUIDs(t, openDB(t), Options{})
	id := mustResolve(t, u, Metric, "sys.cpu")
	m, err := u.GetMeta(ctx, Metric, id)
	if err != nil || m.UID != "000001" || m.Name != "sys.cpu" || m.Description != "" || m.Custom != nil {
		t.Fatalf("fresh meta = %+v, %v", m, err)
	}
	if _, err := u.UpdateMeta(ctx, Metric, id, MetaUpdate{}, false); !errors.Is(err, ErrNoMetaChange) {
		t.Errorf("empty update: %v", err)
	}
	m, err = u.UpdateMeta(ctx, Metric, id, MetaUpdate{Description: strp("cpu"), Custom: map[string]string{"o": "j"}, CustomSet: true}, false)
	if err != nil || m.Description != "cpu" || m.Custom["o"] != "j" {
		t.Fatalf("post = %+v, %v", m, err)
	}
	m, err = u.UpdateMeta(ctx, Metric, id, MetaUpdate{Notes: strp("n")}, false)
	if err != nil || m.Description != "cpu" || m.Notes != "n" || !maps.Equal(m.Custom, map[string]string{"o": "j"}) {
		t.Fatalf("second post kept fields = %+v, %v", m, err)
	}
	// The cell is where OpenTSDB keeps it: row UID, family name, metric_meta.
	cells, err := u.Table().Get(ctx, []byte{0, 0, 1}, nil)
	found := false
	for _, c := range cells {
		found = found || (c.Family == "name" && string(c.Qualifier) == "metric_meta")
	}
	if err != nil || !found {
		t.Errorf("no name:metric_meta cell in %v (%v)", cells, err)
	}
	m, err = u.UpdateMeta(ctx, Metric, id, MetaUpdate{DisplayName: strp("CPU")}, true)
	if err != nil || m.Description != "" || m.Notes != "" || m.DisplayName != "CPU" || m.Custom != nil {
		t.Fatalf("put did not reset = %+v, %v", m, err)
	}
	if got, _ := u.GetMeta(ctx, Metric, id); got.DisplayName != "CPU" || got.Name != "sys.cpu" {
		t.Errorf("re-read = %+v", got)
	}
	if err := u.DeleteMeta(ctx, Metric, id); err != nil {
		t.Fatal(err)
	}
	if got, _ := u.GetMeta(ctx, Metric, id); got.DisplayName != "" {
		t.Errorf("after delete = %+v", got)
	}
	if _, err := u.GetMeta(ctx, TagK, 7); !errors.Is(err, ErrNoSuchID) {
		t.Errorf("unknown uid: %v", err)
	}
	if _, err := u.UpdateMeta(ctx, TagV, 9, MetaUpdate{Notes: strp("x")}, false); !errors.Is(err, ErrNoSuchID) {
		t.Errorf("update unknown uid: %v", err)
	}
}

func TestParseMetaType(t *testing.T) {
	for s, want := range map[string]Kind{"metric": Metric, "METRICS": Metric, "tagk": TagK, "TagV": TagV} {
		if k, err := ParseMetaType(s); err != nil || k != want {
			t.Errorf("ParseMetaType(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := ParseMetaType("host"); err == nil || err.Error() != "Invalid type requested: host" {
		t.Errorf("bad type: %v", err)
	}
}

// TestUIDMetaCreatedFromName: with CreatedFromName (enable_realtime_uid) a
// UIDMeta nobody stored reports when its UID was assigned; without it, 0
// as OpenTSDB answers (src/meta/UIDMeta.java: created stays 0 until
// realtime UID tracking stores it).
func TestUIDMetaCreatedFromName(t *testing.T) {
	db := openDB(t)
	before := time.Now().Unix()
	u := openUIDs(t, db, Options{CreatedFromName: true})
	id := mustResolve(t, u, Metric, "sys.cpu")
	m, err := u.GetMeta(ctx, Metric, id)
	if err != nil || m.Created < before || m.Created > time.Now().Unix() {
		t.Errorf("created = %d (%v), want within [%d, now]", m.Created, err, before)
	}
	plain := openUIDs(t, db, Options{})
	if m, err := plain.GetMeta(ctx, Metric, id); err != nil || m.Created != 0 {
		t.Errorf("without the option: created = %d (%v)", m.Created, err)
	}
}

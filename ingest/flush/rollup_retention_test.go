package flush

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/tsd-db/tsd/ingest/head"
	"github.com/tsd-db/tsd/internal/retention"
	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/series"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// TestRollupRetention: a rule `@1h *:1d` expires the 1h table's rows
// (day rows wholly before the cutoff) and leaves raw rows and 1d rows;
// `@1d *:1d` expires a month row only once the whole month is before the
// cutoff.
func TestRollupRetention(t *testing.T) {
	ctx := context.Background()
	rig := newRollupRig(t)
	s, ro := rig.s, rig.ro
	u, err := uid.Open(ctx, s.DB, &uid.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	key, err := u.ResolvePoint(ctx, nil, []byte("roll.x"), []uid.Tag{{Key: []byte("host"), Value: []byte("a")}})
	if err != nil {
		t.Fatal(err)
	}
	head.SortSeriesKey(key, series.DefaultWidths())
	p := rig.pipeline(t, schema.FormatDense)
	defer p.h.Close()
	for h := range int64(3) {
		p.commit(key, series.IntPoint(t0+h*hour+1000, 1))
	}
	p.clock = t0 + 4*hour
	p.flush(false)
	count := func(tbl storage.Table) int {
		sc := tbl.Scan(ctx, &storage.ScanOptions{})
		n := 0
		for sc.Next() {
			n++
		}
		if err := sc.Close(); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count(ro.Tables[1]) != 1 || count(ro.Tables[2]) != 1 || count(s.Tbl) != 3 {
		t.Fatalf("before: %d 1h rows, %d 1d rows, %d raw rows", count(ro.Tables[1]), count(ro.Tables[2]), count(s.Tbl))
	}
	run := func(setting string, now int64) {
		t.Helper()
		rules, err := retention.Parse(setting)
		if err != nil {
			t.Fatal(err)
		}
		var rr []RollupRetention
		for _, name := range rules.Intervals() {
			iv, _ := ro.Config.ByName(name)
			i := 1
			if name == "1d" {
				i = 2
			}
			rr = append(rr, RollupRetention{Table: ro.Tables[i], Interval: iv, Rules: rules.ForInterval(name)})
		}
		r, err := NewRetention(&RetentionOptions{Table: s.Tbl, UIDs: u, Rules: rules.ForInterval(""), Rollups: rr})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Run(ctx, time.UnixMilli(now)); err != nil {
			t.Fatal(err)
		}
	}
	run("@1h *:1d,@1d *:1d", t0+3*24*hour) // the 1d cutoff is January 3rd: the January row stays
	if count(ro.Tables[1]) != 0 || count(ro.Tables[2]) != 1 || count(s.Tbl) != 3 {
		t.Errorf("after @1h: %d 1h rows, %d 1d rows, %d raw rows", count(ro.Tables[1]), count(ro.Tables[2]), count(s.Tbl))
	}
	run("@1d *:1d", t0+40*24*hour) // the cutoff is in February: January's row goes
	if count(ro.Tables[2]) != 0 || count(s.Tbl) != 3 {
		t.Errorf("after @1d: %d 1d rows, %d raw rows", count(ro.Tables[2]), count(s.Tbl))
	}
}

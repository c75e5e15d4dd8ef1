package lookup

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage/pebble"
	"github.com/tsd-db/tsd/uid"
	"github.com/tsd-db/tsd/uid/index"
)

// benchService registers metrics × hosts series, each m<i>{host=h<j>}, on
// an in-memory store (the subject is the lookup, not the disk).
func benchService(b *testing.B, metrics, hosts int) *Service {
	db, err := pebble.Open("/b", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	u, err := uid.Open(ctx, db, &uid.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := db.EnsureTable(ctx, schema.MetaTableSpec(schema.DefaultMetaTable)); err != nil {
		b.Fatal(err)
	}
	meta, _ := db.Table(ctx, schema.DefaultMetaTable)
	ix, err := index.Open(ctx, meta, u, &index.Options{RefreshInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	assign := func(k uid.Kind, n string) []byte {
		id, err := u.Assign(ctx, k, []byte(n))
		if err != nil {
			b.Fatal(err)
		}
		return u.AppendID(nil, k, id)
	}
	host := assign(uid.TagK, "host")
	hv := make([][]byte, hosts)
	for j := range hv {
		hv[j] = assign(uid.TagV, fmt.Sprintf("h%d", j))
	}
	var regs []index.Registration
	for i := range metrics {
		m := assign(uid.Metric, fmt.Sprintf("m%d", i))
		for j := range hosts {
			regs = append(regs, index.Registration{TSUID: append(append(append([]byte{}, m...), host...), hv[j]...)})
		}
	}
	if err := ix.RegisterMany(ctx, regs); err != nil {
		b.Fatal(err)
	}
	svc, _ := New(Options{UIDs: u, Index: ix})
	return svc
}

// BenchmarkLookup: Grafana's tag_values(m3, host) (one metric, 1000
// results named) and *{host=h5} (a value across every metric).
func BenchmarkLookup(b *testing.B) {
	svc := benchService(b, 10, 1000)
	for _, m := range []string{"m3{host=*}", "*{host=h5}"} {
		q, _ := ParseM(m)
		q.Limit = 1000
		b.Run(m, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.Lookup(ctx, &q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package bigtable

import (
	"context"
	"errors"
	"path"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"

	"github.com/tsd-db/tsd/storage"
)

// emulator is an in-process Bigtable emulator whose Close may be called
// more than once (bttest panics on a second Close once its GC loop runs).
type emulator struct {
	*bttest.Server
	once sync.Once
}

func (e *emulator) Close() { e.once.Do(e.Server.Close) }

// startEmulator starts an emulator on addr ("127.0.0.1:0" for an ephemeral
// port) with Bigtable's own 256 MiB message limit, closed at cleanup.
func startEmulator(t testing.TB, addr string, extra ...grpc.ServerOption) *emulator {
	t.Helper()
	opts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(maxMessageSize), grpc.MaxSendMsgSize(maxMessageSize)}, extra...)
	srv, err := bttest.NewServer(addr, opts...)
	if err != nil {
		t.Fatalf("start emulator: %v", err)
	}
	e := &emulator{Server: srv}
	t.Cleanup(e.Close)
	return e
}

// rpcCounter counts the unary requests an emulator serves, by method name
// (for example "DropRowRange"), to tell which request a call used.
type rpcCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *rpcCounter) option() grpc.ServerOption {
	return grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		c.mu.Lock()
		if c.n == nil {
			c.n = make(map[string]int)
		}
		c.n[path.Base(info.FullMethod)]++
		c.mu.Unlock()
		return h(ctx, req)
	})
}

func (c *rpcCounter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

// openEmulated opens a DB on a fresh emulator, with short timeouts so that
// fault tests end quickly.
func openEmulated(t testing.TB, mod ...func(*Options)) *DB {
	t.Helper()
	return openAt(t, startEmulator(t, "127.0.0.1:0").Addr, mod...)
}

func openAt(t testing.TB, addr string, mod ...func(*Options)) *DB {
	t.Helper()
	opts := Options{Project: "proj", Instance: "inst", EmulatorHost: addr, AttemptTimeout: 5 * time.Second}
	for _, m := range mod {
		m(&opts)
	}
	db, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// mustTable ensures spec and returns its handle.
func mustTable(t testing.TB, db *DB, spec storage.TableSpec) storage.Table {
	t.Helper()
	ctx := context.Background()
	if err := db.EnsureTable(ctx, spec); err != nil {
		t.Fatalf("ensure %s: %v", spec.Name, err)
	}
	tbl, err := db.Table(ctx, spec.Name)
	if err != nil {
		t.Fatalf("table %s: %v", spec.Name, err)
	}
	return tbl
}

func oneFamily(table, family string, versions int, ttl time.Duration) storage.TableSpec {
	return storage.TableSpec{Name: table, Families: []storage.FamilySpec{{Name: family, MaxVersions: versions, TTL: ttl}}}
}

// ms converts milliseconds to a contract timestamp.
func ms(n int64) int64 { return n * 1000 }

func scanAll(t testing.TB, tbl storage.Table, opts *storage.ScanOptions) []storage.Cell {
	t.Helper()
	s := tbl.Scan(context.Background(), opts)
	var out []storage.Cell
	for s.Next() {
		for _, c := range s.Row().Cells {
			out = append(out, storage.Cell{
				Row: append([]byte(nil), c.Row...), Family: c.Family,
				Qualifier: append([]byte(nil), c.Qualifier...), Timestamp: c.Timestamp,
				Value: append([]byte(nil), c.Value...),
			})
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}

func rowsOf(cells []storage.Cell) []string {
	var rows []string
	for _, c := range cells {
		if len(rows) == 0 || rows[len(rows)-1] != string(c.Row) {
			rows = append(rows, string(c.Row))
		}
	}
	return rows
}

func wantErr(t testing.TB, err, class error) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("error %v: want class %v", err, class)
	}
}

package bigtable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bt "cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/admin/apiv2/adminpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tsd-db/tsd/storage"
)

// maxMessageSize raises gRPC's message limits to Bigtable's own (256 MiB).
const maxMessageSize = 256 << 20

// DB is a storage.DB on one Bigtable instance. It is safe for concurrent use.
type DB struct {
	opts   Options
	client *bt.Client
	admin  *bt.AdminClient
	conn   *grpc.ClientConn // dialed by Open for EmulatorHost; nil otherwise

	closed atomic.Bool
	done   chan struct{} // closed by Close; wakes retry pauses
	rpcs   rpcErrors     // failed attempts of RPCs (stats.go)

	mu struct {
		sync.Mutex
		tables map[string]*table // handles by name; specs refreshed by EnsureTable
	}
}

var _ storage.DB = (*DB)(nil)

// Open connects to the instance in opts. It sends no request: a missing
// instance or unreachable server shows on the first call.
func Open(ctx context.Context, opts Options) (*DB, error) {
	opts = opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	db := &DB{opts: opts, done: make(chan struct{})}
	db.mu.tables = make(map[string]*table)
	copts, err := db.clientOptions()
	if err != nil {
		return nil, err
	}
	if err := db.newClients(ctx, copts); err != nil {
		db.closeClients()
		return nil, fmt.Errorf("bigtable: open %s: %w", opts, err)
	}
	return db, nil
}

// clientOptions dials the emulator when one is configured and returns the
// client options for both clients.
func (db *DB) clientOptions() ([]option.ClientOption, error) {
	var copts []option.ClientOption
	if host := db.opts.EmulatorHost; host != "" {
		conn, err := dialEmulator(host)
		if err != nil {
			return nil, fmt.Errorf("bigtable: dial emulator %q: %w", host, err)
		}
		db.conn = conn
		copts = append(copts, option.WithGRPCConn(conn))
	}
	return append(copts, db.opts.ClientOptions...), nil
}

// dialEmulator connects without TLS and reconnects quickly, so a restarted
// emulator is found again within about a second.
func dialEmulator(host string) (*grpc.ClientConn, error) {
	host = strings.TrimPrefix(strings.TrimPrefix(host, "http://"), "https://")
	return grpc.NewClient("passthrough:///"+host,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageSize), grpc.MaxCallSendMsgSize(maxMessageSize)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		}))
}

func (db *DB) newClients(ctx context.Context, copts []option.ClientOption) error {
	cfg := bt.ClientConfig{}
	if db.opts.DisableClientMetrics || db.opts.EmulatorHost != "" {
		cfg.MetricsProvider = bt.NoopMetricsProvider{}
	}
	if db.opts.EmulatorHost != "" {
		cfg.DisableSession = true
	}
	var err error
	if db.client, err = bt.NewClientWithConfig(ctx, db.opts.Project, db.opts.Instance, cfg, copts...); err != nil {
		return err
	}
	db.admin, err = bt.NewAdminClient(ctx, db.opts.Project, db.opts.Instance, copts...)
	return err
}

// Close releases the clients; later calls return storage.ErrClosed. It is
// safe to call more than once.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	close(db.done)
	return db.closeClients()
}

// closeClients closes both clients and the emulator conn. Clients given one
// conn (EmulatorHost, or option.WithGRPCConn in ClientOptions) each close it,
// so the second close reports Canceled "connection is closing"; that is not
// a failure.
func (db *DB) closeClients() error {
	var errs []error
	if db.client != nil {
		errs = append(errs, ignoreClosing(db.client.Close()))
	}
	if db.admin != nil {
		errs = append(errs, ignoreClosing(db.admin.Close()))
	}
	if db.conn != nil {
		// The clients may already have closed the conn they were given.
		_ = db.conn.Close()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bigtable: close: %w", err)
	}
	return nil
}

func ignoreClosing(err error) error {
	if status.Code(err) == codes.Canceled {
		return nil
	}
	return err
}

func (db *DB) createTables() bool { return *db.opts.CreateTables }

func (db *DB) tableName(name string) string {
	return "projects/" + db.opts.Project + "/instances/" + db.opts.Instance + "/tables/" + name
}

// getTable reads a table's schema. A missing table is storage.ErrNotFound
// naming it.
func (db *DB) getTable(ctx context.Context, name string) (storage.TableSpec, error) {
	var t *adminpb.Table
	err := db.call(ctx, "get table "+name, func(ctx context.Context) (err error) {
		t, err = db.admin.TableAdminClientV2().GetTable(ctx, &adminpb.GetTableRequest{
			Name: db.tableName(name), View: adminpb.Table_SCHEMA_VIEW,
		})
		return err
	})
	if err != nil {
		return storage.TableSpec{}, err
	}
	return specOf(name, t), nil
}

// EnsureTable creates a missing table and families with GC policies from
// spec and updates the policies of existing families. With CreateTables off
// it only checks that the table and families exist.
func (db *DB) EnsureTable(ctx context.Context, spec storage.TableSpec) error {
	if err := storage.ValidateTableSpec(spec); err != nil {
		return err
	}
	cur, err := db.getTable(ctx, spec.Name)
	if errors.Is(err, storage.ErrNotFound) {
		cur, err = db.createTable(ctx, spec)
	}
	if err != nil {
		return err
	}
	changed := false
	for _, f := range spec.Families {
		c, err := db.ensureFamily(ctx, cur, f)
		if err != nil {
			return err
		}
		changed = changed || c
	}
	if changed {
		if cur, err = db.getTable(ctx, spec.Name); err != nil {
			return err
		}
	}
	db.cache(cur)
	return nil
}

// createTable creates spec's table with its families. Losing a creation
// race to another daemon is not an error: the winner's table is returned
// and its families are then brought in line like any existing table's.
func (db *DB) createTable(ctx context.Context, spec storage.TableSpec) (storage.TableSpec, error) {
	if !db.createTables() {
		return storage.TableSpec{}, fmt.Errorf("bigtable: table %q does not exist and table creation is off (tsd.storage.bigtable.create_tables=false): %w",
			spec.Name, storage.ErrNotFound)
	}
	conf := &bt.TableConf{TableID: spec.Name, ColumnFamilies: make(map[string]bt.Family, len(spec.Families))}
	for _, f := range spec.Families {
		conf.ColumnFamilies[f.Name] = bt.Family{GCPolicy: gcPolicy(f)}
	}
	err := db.callOnce(ctx, "create table "+spec.Name, func(ctx context.Context) error {
		return db.admin.CreateTableFromConf(ctx, conf)
	})
	if err != nil && !errors.Is(err, errExists) {
		return storage.TableSpec{}, err
	}
	return db.getTable(ctx, spec.Name)
}

// ensureFamily creates f if cur lacks it and updates its GC policy if its
// limits differ; changed reports an admin write.
func (db *DB) ensureFamily(ctx context.Context, cur storage.TableSpec, f storage.FamilySpec) (changed bool, err error) {
	have, ok := cur.Family(f.Name)
	if ok && have == normalizeFamily(f) {
		return false, nil
	}
	if !db.createTables() {
		if !ok {
			return false, fmt.Errorf("bigtable: table %q has no column family %q and table creation is off (tsd.storage.bigtable.create_tables=false): %w",
				cur.Name, f.Name, storage.ErrNotFound)
		}
		return false, nil // the operator owns the schema; reads follow the server's policy
	}
	if !ok {
		err := db.callOnce(ctx, fmt.Sprintf("create family %s:%s", cur.Name, f.Name), func(ctx context.Context) error {
			return db.admin.CreateColumnFamilyWithConfig(ctx, cur.Name, f.Name, bt.Family{GCPolicy: gcPolicy(f)})
		})
		if !errors.Is(err, errExists) {
			return true, err
		}
		// Another daemon created it first; make its policy ours.
	}
	return true, db.call(ctx, fmt.Sprintf("set gc policy %s:%s", cur.Name, f.Name), func(ctx context.Context) error {
		return db.admin.SetGCPolicy(ctx, cur.Name, f.Name, gcPolicy(f))
	})
}

// cache installs spec on the table's shared handle, creating it if needed.
func (db *DB) cache(spec storage.TableSpec) *table {
	db.mu.Lock()
	defer db.mu.Unlock()
	t := db.mu.tables[spec.Name]
	if t == nil {
		t = newTable(db, spec)
		db.mu.tables[spec.Name] = t
		return t
	}
	t.setSpec(spec)
	return t
}

// Table returns a handle on an existing table. The handle's family limits
// are read from the server once and refreshed by EnsureTable on this DB.
func (db *DB) Table(ctx context.Context, name string) (storage.Table, error) {
	if db.closed.Load() {
		return nil, fmt.Errorf("bigtable: table %q: %w", name, storage.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bigtable: table %q: %w", name, err)
	}
	if !storage.ValidName(name) {
		return nil, storage.Invalidf("table name %q: must match [_a-zA-Z0-9][-_.a-zA-Z0-9]*", name)
	}
	db.mu.Lock()
	t := db.mu.tables[name]
	db.mu.Unlock()
	if t != nil {
		return t, nil
	}
	spec, err := db.getTable(ctx, name)
	if err != nil {
		return nil, err
	}
	return db.cache(spec), nil
}

// Tables lists the instance's tables and families in name order.
func (db *DB) Tables(ctx context.Context) ([]storage.TableSpec, error) {
	var names []string
	err := db.call(ctx, "list tables", func(ctx context.Context) (err error) {
		names, err = db.admin.Tables(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	specs := make([]storage.TableSpec, 0, len(names))
	for _, name := range names {
		spec, err := db.getTable(ctx, name)
		if errors.Is(err, storage.ErrNotFound) {
			continue // dropped since the listing
		}
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// DropTable deletes a table and its data.
func (db *DB) DropTable(ctx context.Context, name string) error {
	if !storage.ValidName(name) {
		return storage.Invalidf("table name %q: must match [_a-zA-Z0-9][-_.a-zA-Z0-9]*", name)
	}
	err := db.call(ctx, "drop table "+name, func(ctx context.Context) error {
		return db.admin.DeleteTable(ctx, name)
	})
	db.mu.Lock()
	delete(db.mu.tables, name)
	db.mu.Unlock()
	return err
}

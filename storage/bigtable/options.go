package bigtable

import (
	"fmt"
	"time"

	"google.golang.org/api/option"

	"github.com/tsd-db/tsd/storage"
)

// bigtableMaxMutations is Bigtable's limit of mutations in one MutateRows
// request (and in one row's mutation).
const bigtableMaxMutations = 100_000

// Options configure Open. Library code never reads the environment: cmd/tsd
// reads BIGTABLE_EMULATOR_HOST and passes it as EmulatorHost.
type Options struct {
	// Project is the Google Cloud project ID. Required.
	Project string
	// Instance is the Bigtable instance ID. Required.
	Instance string

	// CreateTables lets EnsureTable create missing tables and families and
	// update their garbage-collection policies. When false, EnsureTable
	// only checks that the table and families exist and reports a missing
	// one as an error naming it that wraps storage.ErrNotFound; no admin
	// write is ever sent. Default true (a nil pointer); use
	// Bool(false) to turn it off.
	CreateTables *bool

	// EmulatorHost is "host:port" of a Bigtable emulator (bttest or
	// `gcloud beta emulators bigtable`). When set, Open dials it without TLS
	// or credentials and turns off the client's built-in metrics export.
	// Default "" (real Bigtable, Application Default Credentials).
	EmulatorHost string
	// ClientOptions are passed to the data and admin clients after the
	// options Open derives itself, so they win (for example
	// option.WithGRPCConn to a test server). Default none.
	ClientOptions []option.ClientOption
	// DisableClientMetrics turns off the Bigtable client's built-in export
	// of metrics to Cloud Monitoring. Forced on with EmulatorHost. Default
	// false.
	DisableClientMetrics bool

	// MaxAttempts is how many times an idempotent call is tried when it
	// fails with a retryable error (Unavailable, DeadlineExceeded of an
	// attempt, Aborted, ResourceExhausted, Internal). Increment, Append and
	// CheckAndPut are tried once: repeating them could apply them twice.
	// Default 4.
	MaxAttempts int
	// BackoffBase is the pause before the first retry; it doubles with each
	// attempt, with full jitter. Default 50ms.
	BackoffBase time.Duration
	// BackoffMax caps the pause between attempts. Default 2s.
	BackoffMax time.Duration
	// AttemptTimeout bounds one attempt of a call, and for scans the wait
	// for the next row. The Go client retries Unavailable internally until
	// its context ends, so without this bound a call to an unreachable
	// server would wait for the caller's deadline and never report a
	// retryable error. Default 30s.
	AttemptTimeout time.Duration
	// ObserveRequest, if set, is given the duration of every RPC attempt
	// (each retry is one; failed ones included) by the goroutine that made
	// it: it must be quick and must not call the DB. The daemon feeds a
	// latency histogram with it. Default none.
	ObserveRequest func(time.Duration)

	// BulkMaxMutations caps the mutations (cell sets and deletes) in one
	// ApplyBulk request; at most 100,000 (Bigtable's limit). Default 20,000.
	BulkMaxMutations int
	// BulkMaxBytes caps the approximate payload bytes (keys, qualifiers,
	// values) of one ApplyBulk request. Default 16 MiB.
	BulkMaxBytes int

	// ScanChunkRows is how many rows one ReadRows request of a Scan
	// fetches before the scanner continues after the last row. Default 1000.
	ScanChunkRows int
	// ScanChunkBytes ends a scan chunk early once this many payload bytes
	// are buffered, bounding a scanner's memory. Default 4 MiB.
	ScanChunkBytes int

	// Clock stamps cells written with a zero timestamp and measures TTL at
	// read time. Default time.Now.
	Clock func() time.Time
}

// Bool returns a pointer to b, for Options.CreateTables.
func Bool(b bool) *bool { return &b }

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o Options) EnsureDefaults() Options {
	if o.CreateTables == nil {
		o.CreateTables = Bool(true)
	}
	o.MaxAttempts = orInt(o.MaxAttempts, 4)
	o.BackoffBase = orDur(o.BackoffBase, 50*time.Millisecond)
	o.BackoffMax = orDur(o.BackoffMax, 2*time.Second)
	o.AttemptTimeout = orDur(o.AttemptTimeout, 30*time.Second)
	o.BulkMaxMutations = orInt(o.BulkMaxMutations, 20_000)
	o.BulkMaxBytes = orInt(o.BulkMaxBytes, 16<<20)
	o.ScanChunkRows = orInt(o.ScanChunkRows, 1000)
	o.ScanChunkBytes = orInt(o.ScanChunkBytes, 4<<20)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// Validate reports the first bad field, naming it.
func (o Options) Validate() error {
	switch {
	case o.Project == "":
		return storage.Invalidf("bigtable options: Project is required")
	case o.Instance == "":
		return storage.Invalidf("bigtable options: Instance is required")
	case o.MaxAttempts < 1:
		return storage.Invalidf("bigtable options: MaxAttempts %d < 1", o.MaxAttempts)
	case o.BackoffBase < 0 || o.BackoffMax < o.BackoffBase:
		return storage.Invalidf("bigtable options: backoff base %v / max %v", o.BackoffBase, o.BackoffMax)
	case o.AttemptTimeout <= 0:
		return storage.Invalidf("bigtable options: AttemptTimeout %v must be positive", o.AttemptTimeout)
	case o.BulkMaxMutations < 1 || o.BulkMaxMutations > bigtableMaxMutations:
		return storage.Invalidf("bigtable options: BulkMaxMutations %d not in [1, %d]", o.BulkMaxMutations, bigtableMaxMutations)
	case o.BulkMaxBytes < 1 || o.ScanChunkRows < 1 || o.ScanChunkBytes < 1:
		return storage.Invalidf("bigtable options: BulkMaxBytes, ScanChunkRows and ScanChunkBytes must be positive")
	}
	return nil
}

// String names the instance, for errors and logs.
func (o Options) String() string {
	return fmt.Sprintf("bigtable project %q instance %q", o.Project, o.Instance)
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func orDur(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

package index

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/tsd-db/tsd/series"
)

// Defaults of Options.
const (
	DefaultRefreshInterval = 5 * time.Second
	DefaultIDBlock         = 64
	DefaultSeqBlock        = 64
	DefaultHoleTimeout     = time.Minute
	DefaultLastSlack       = 6 * time.Hour
	DefaultMaxAttempts     = 3
	DefaultRetryBackoff    = 20 * time.Millisecond
)

// Options configure an Index. The zero value is valid after EnsureDefaults.
type Options struct {
	// Widths are the UID widths of TSUIDs (tsd.storage.uid.width.*).
	// A zero value takes 3 bytes for every kind.
	Widths series.Widths
	// RefreshInterval is how often the background loop persists pending
	// hour extensions and reads the changes other daemons logged. A
	// negative value disables the loop (tests call Refresh and Flush by
	// hand). Default 5s; the team's contract is at most 10s.
	RefreshInterval time.Duration
	// IDBlock is how many series ids one Increment of the counter reserves,
	// so that registering a series rarely costs a counter RPC. Ids left in
	// a block when the process exits are skipped, never reused. Default 64.
	IDBlock int
	// SeqBlock is how many log sequence numbers one Increment reserves.
	// Default 64.
	SeqBlock int
	// HoleTimeout is how long a log sequence number may stay unwritten
	// below written ones before readers void it (its writer crashed or
	// stalled; a stalled writer then logs again under a new number). A
	// writer stops using a block of sequence numbers after half of it.
	// At least twice RefreshInterval. Default 1m.
	HoleTimeout time.Duration
	// LastSlack is how far beyond a point's hour Touch moves a series'
	// last hour when it extends it, so that a series written every hour
	// costs one persisted extension per LastSlack rather than per hour.
	// The last hour is therefore an upper bound. Rounded down to whole
	// hours. Default 6h.
	LastSlack time.Duration
	// MaxAttempts is how many times a storage call that failed with a
	// retryable error is tried. Default 3.
	MaxAttempts int
	// RetryBackoff is the pause after the first retryable error; it doubles
	// with each retry. Default 20ms.
	RetryBackoff time.Duration
	// StoreTimeout bounds RegisterSeries' creation of a new series in the
	// store (the head's registrar has no context of its own). Past it the
	// error is retryable, so a writer answers "retry later" while the store
	// is unreachable instead of holding its client for the store's own
	// retries. Default DefaultStoreTimeout (10s); negative is no bound.
	StoreTimeout time.Duration
	// Logger receives background errors and repairs. Default slog.Default().
	Logger *slog.Logger
	// Clock measures hole and block ages. Default time.Now.
	Clock func() time.Time
	// OnNewSeries, when set, is called with the TSUID of each series this
	// Index registered as new (or found claimed by another daemon while
	// registering it), once it is in the index, on the registering
	// goroutine: it must not block or keep the slice. The daemon feeds
	// OpenTSDB's tree processing from it. Default nil.
	OnNewSeries func(tsuid []byte)
}

// DefaultStoreTimeout is Options.StoreTimeout's default.
const DefaultStoreTimeout = 10 * time.Second

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Widths == (series.Widths{}) {
		o.Widths = series.DefaultWidths()
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	o.IDBlock = orInt(o.IDBlock, DefaultIDBlock)
	o.SeqBlock = orInt(o.SeqBlock, DefaultSeqBlock)
	o.MaxAttempts = orInt(o.MaxAttempts, DefaultMaxAttempts)
	if o.HoleTimeout == 0 {
		o.HoleTimeout = DefaultHoleTimeout
	}
	if o.LastSlack == 0 {
		o.LastSlack = DefaultLastSlack
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.StoreTimeout == 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Validate reports the first bad field.
func (o *Options) Validate() error {
	switch {
	case !o.Widths.Valid():
		return fmt.Errorf("index: uid widths %+v: each must be 1..8", o.Widths)
	case o.IDBlock < 1 || o.SeqBlock < 1:
		return fmt.Errorf("index: IDBlock %d and SeqBlock %d must be >= 1", o.IDBlock, o.SeqBlock)
	case o.MaxAttempts < 1:
		return fmt.Errorf("index: MaxAttempts %d must be >= 1", o.MaxAttempts)
	case o.LastSlack < 0 || o.RetryBackoff < 0:
		return fmt.Errorf("index: negative LastSlack or RetryBackoff")
	case o.HoleTimeout <= 0 || (o.RefreshInterval > 0 && o.HoleTimeout < 2*o.RefreshInterval):
		return fmt.Errorf("index: HoleTimeout %v must be at least twice RefreshInterval %v", o.HoleTimeout, o.RefreshInterval)
	}
	return nil
}

// slackHours is LastSlack in whole hours.
func (o *Options) slackHours() uint32 { return uint32(o.LastSlack / time.Hour) }

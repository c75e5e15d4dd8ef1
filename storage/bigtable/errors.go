package bigtable

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tsd-db/tsd/storage"
)

// class is what a caller of the contract should do about a gRPC code.
type class uint8

const (
	classOther    class = iota // report as is
	classNotFound              // storage.ErrNotFound
	classInvalid               // storage.ErrInvalidArgument
	classRetry                 // storage.ErrRetryable; idempotent calls retry it
	classExists                // AlreadyExists: EnsureTable's race with another daemon
)

// codeClass is the one table translating Bigtable's gRPC codes into the
// contract's error classes. Canceled and DeadlineExceeded are decided by
// classify, which knows whether the caller's context ended.
var codeClass = map[codes.Code]class{
	codes.NotFound:           classNotFound,
	codes.InvalidArgument:    classInvalid,
	codes.OutOfRange:         classInvalid,
	codes.FailedPrecondition: classInvalid,
	codes.Unavailable:        classRetry,
	codes.DeadlineExceeded:   classRetry,
	codes.Aborted:            classRetry,
	codes.ResourceExhausted:  classRetry,
	codes.Internal:           classRetry,
	codes.AlreadyExists:      classExists,
}

// errExists marks an AlreadyExists answer inside this package.
var errExists = errors.New("already exists")

// classify wraps err from the Bigtable client with step and the contract's
// class. ctx is the caller's context: when it is done, the error is the
// context's, never retryable.
func (db *DB) classify(ctx context.Context, step string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("bigtable: %s: %w", step, cerr)
	}
	if db.closed.Load() {
		return fmt.Errorf("bigtable: %s: %w", step, storage.ErrClosed)
	}
	if errors.Is(err, storage.ErrInvalidArgument) || errors.Is(err, storage.ErrNotFound) ||
		errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrRetryable) {
		return fmt.Errorf("bigtable: %s: %w", step, err)
	}
	wrapped := fmt.Errorf("bigtable: %s: %w", step, err)
	switch classOf(err) {
	case classNotFound:
		return fmt.Errorf("%w: %w", storage.ErrNotFound, wrapped)
	case classInvalid:
		return fmt.Errorf("%w: %w", storage.ErrInvalidArgument, wrapped)
	case classRetry:
		return storage.MarkRetryable(wrapped)
	case classExists:
		return fmt.Errorf("%w: %w", errExists, wrapped)
	}
	return wrapped
}

// classOf looks up err's gRPC code. An attempt that hit its own deadline
// (context.DeadlineExceeded without a status) is retryable: classify has
// already ruled out the caller's context.
func classOf(err error) class {
	if errors.Is(err, context.DeadlineExceeded) {
		return classRetry
	}
	st, ok := status.FromError(err)
	if !ok {
		return classOther
	}
	return codeClass[st.Code()]
}

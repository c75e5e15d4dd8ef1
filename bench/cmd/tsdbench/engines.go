package main

import (
	"io"
	"log/slog"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

// openStore opens tsd's embedded storage engine with its defaults.
func openStore(dir string) (storage.DB, error) {
	return pebble.Open(dir, &pebble.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

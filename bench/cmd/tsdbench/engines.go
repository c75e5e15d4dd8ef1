package main

import "github.com/tsd-db/tsd/storage"

// openStore opens tsd's embedded storage engine; nil until storage/pebble
// lands, which makes the storage rows print "n/a".
var openStore func(dir string) (storage.DB, error)

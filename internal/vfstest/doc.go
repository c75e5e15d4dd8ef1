// Package vfstest reads and writes whole files on a pebble vfs.FS for
// tests: the damage tests of storage/pebble and ingest copy stores, flip
// bytes in their files and write them back. It imports no tsd package.
//
// WriteFile writes a copy of its bytes and syncs it: pebble's in-memory
// files mangle the buffer a Write was given in invariants builds, and a
// crashable in-memory file system keeps only what was synced.
package vfstest

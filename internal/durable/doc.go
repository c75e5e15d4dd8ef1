// Package durable writes files so that they survive a crash: the one
// place tsd replaces a small file whole (the flusher's sequence and
// top-hour files, the writer ID, the store's table catalog, a mended log
// or MANIFEST) and syncs a directory after creating, renaming or removing
// an entry in it.
//
// # Invariants
//
//   - WriteFile leaves path holding either its old bytes or data, never a
//     mix and never nothing: the data goes to path+".tmp", is synced, is
//     renamed over path, and the directory is synced so that the rename
//     itself is durable.
//   - Errors name the directory or file they concern and wrap the file
//     system's error (%w), so callers may test for vfs errors such as a
//     full disk.
//
// Every function takes pebble's vfs.FS, so the crash and fault tests run
// the same code on vfs.NewCrashableMem and error-injecting file systems
// (docs/operations.md, "Durability").
package durable

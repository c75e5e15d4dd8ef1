// Package ingesttest holds what the tests of the write path's packages
// (ingest/head and ingest/flush) share: series keys and random points, a
// model of what a head must hold and the checks against it, a real store
// to flush into, a table whose calls can be hooked or failed, and the
// SIGKILL crash harness.
//
// It imports neither the head nor the flusher, so that the head's own
// (internal) tests can use it: it reaches a head through the small
// interfaces it defines (Reader, KeyAppender), which *head.Head and
// *head.Appender satisfy. Nor does it open a storage engine, which no
// ingest package may import: a test opens one and hands it to NewStore.
package ingesttest

// Package changes tells a cache of query answers whether the data an
// answer read may have changed since the answer was computed.
//
// A Tracker keeps a generation number, raised by every change, and for
// each hour of time (folded onto a ring of Slots hours, so hours Slots
// apart share a slot) the generation of the last change to a point in it.
// A writer calls Mark with the time span of what it wrote once the write
// is visible to readers, or MarkAll for a change it cannot place in time
// (a UID renamed, rows deleted, a rebuild). A reader takes Gen before it
// reads; its answer over [mint, maxt] still holds while Changed(gen, mint,
// maxt) is false.
//
// A move is not a change: the flusher writing the head's rows to the
// store, or the compactor folding a stored row, keeps every point's value,
// so it calls MarkMoved, which no answer heeds (Changed) but a reader that
// cached the store's rows does (ChangedOrMoved: query/read's trust index).
//
// # Invariants
//
//   - Marks come after visibility: a change whose mark a reader's Gen does
//     not cover was visible before that reader read, so the answer holds it.
//   - A slot only grows (compare-and-swap to the larger generation), so two
//     writers marking out of order cannot lower a later change's mark.
//   - Folding and spans of Slots hours or more only ever report a change
//     that did not happen, never hide one that did.
//
// docs/operations.md ("The PromQL answer cache") says what an operator
// sees of it.
package changes

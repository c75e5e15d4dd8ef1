// Package ratelog is tsd's one rate-limited logger: log lines about what a
// client did (a refused point, a connection closed by a deadline, a failed
// login) that a hostile or broken client could otherwise repeat thousands
// of times a second.
//
// # Budget
//
// A line belongs to a kind (a short fixed name such as "conn.limit" or
// "put.refused") and a client (its IP address, see Client; "" for lines
// about the daemon itself, such as a full disk). Within one window
// (Options.Every, default one minute) each (kind, client) pair may log
// Options.Burst lines (default 1) and each kind Options.KindBurst lines
// across all its clients (default 10), so a flood from 20,000 addresses
// still writes at most KindBurst lines a window. A line that is dropped is
// counted on its kind; the kind's next line carries the count as the
// attribute "suppressed", so nothing is lost from the record but the
// repetition. Kinds are fixed names in the code, never client input.
//
// # Memory
//
// At most Options.MaxKeys pairs are remembered (default 10,000). When the
// table is full, pairs whose window has ended are forgotten; if none has,
// the new pair is limited by its kind's budget alone. Memory is bounded
// whatever clients do.
//
// A Logger is safe for concurrent use. Its nil value is not usable: make
// one with New.
package ratelog

// Package harness runs tsd's benchmark figures beside their peers and prints
// one table: figure | tsd | peer | ratio | runs.
//
// A Figure pairs two Measures, tsd's and the peer's, that do the same work on
// the same data (the pinned dataset of bench/gen). Each is run Size.Runs times,
// alternating which side goes first, and the table shows the medians: these
// machines are shared and noisy, so only medians and same-run ratios mean
// anything. A side that cannot be measured yet prints its Missing text, for
// example "n/a (issue 6)", never a made-up number.
//
// Adding a row is a few lines in figures.go: a Figure literal whose Measures
// call the package under test and return one number. Expensive shared state
// (a loaded Prometheus DB, pre-encoded bodies) is built once per Env through
// Env.Cached and released by Env.Close.
package harness

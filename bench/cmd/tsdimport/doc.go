// Command tsdimport measures tsd import and tsd export on the bench
// dataset and checks their round trip, all in one run:
//
//  1. it builds tsd (or takes -tsd) and tsdload (or -tsdload), and writes
//     the devops dataset (bench/gen, -hosts x -span) as an import file;
//  2. for each protocol (telnet, then /api/put JSON) it starts a daemon on
//     a fresh directory and runs tsd import --url into it, then a second
//     fresh daemon and runs tsdload with the same protocol, connections
//     (1) and batch size, and prints both points/s and their ratio;
//  3. it exports the telnet daemon's store (tsd export --data, stopped)
//     to a file and prints export's points/s;
//  4. it imports that file into a fresh store (tsd import --data) and
//     exports that store again, and checks that the dataset, the first
//     export and the second export hold the same points: the same number,
//     and the same multiset of (metric, tags, timestamp, float64 value),
//     compared by a sum of 64-bit hashes and a sum of their squares (a
//     missing, extra or changed point changes both), exiting 1 if not.
//
// Usage:
//
//	go run ./bench/cmd/tsdimport                       # 100 hosts x 24 h: 8.64 M points
//	go run ./bench/cmd/tsdimport -hosts 2 -span 1h     # seconds
package main

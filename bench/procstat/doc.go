// Package procstat reads a process's CPU time and memory from /proc, so the
// load and query tools report the server's cost as the kernel sees it, not
// as the server's own stats claim.
//
// CPU seconds are utime+stime (fields 14 and 15 of /proc/<pid>/stat) divided
// by the clock tick rate, taken as 100 Hz: Linux reports these fields in
// USER_HZ, which is 100 on every architecture Go supports. Peak resident
// memory is VmHWM and current resident memory VmRSS from /proc/<pid>/status.
package procstat

package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU fields of /proc/<pid>/stat.
const userHZ = 100

// Sample is one reading of a process.
type Sample struct {
	// CPUSeconds is user plus system CPU time since the process started.
	CPUSeconds float64
	// PeakRSS is the resident set high-water mark (VmHWM) in bytes.
	PeakRSS int64
	// RSS is the current resident set (VmRSS) in bytes.
	RSS int64
}

// Read samples process pid.
func Read(pid int) (Sample, error) {
	var s Sample
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, fmt.Errorf("procstat: %w", err)
	}
	if s.CPUSeconds, err = parseStat(stat); err != nil {
		return s, fmt.Errorf("procstat: /proc/%d/stat: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("procstat: %w", err)
	}
	if s.PeakRSS, s.RSS, err = parseStatus(status); err != nil {
		return s, fmt.Errorf("procstat: /proc/%d/status: %w", pid, err)
	}
	return s, nil
}

// parseStat returns utime+stime in seconds. The command name (field 2) is in
// parentheses and may hold spaces or ')', so fields are counted after the
// last ')'.
func parseStat(b []byte) (float64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so utime (14) is f[11] and stime (15) f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("utime %q stime %q", f[11], f[12])
	}
	return float64(ut+st) / userHZ, nil
}

// parseStatus returns VmHWM and VmRSS in bytes.
func parseStatus(b []byte) (hwm, rss int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := 0
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		var kb int64
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb); err != nil {
			return 0, 0, fmt.Errorf("%s: %q", k, v)
		}
		if k == "VmHWM" {
			hwm = kb << 10
		} else {
			rss = kb << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("VmHWM or VmRSS missing (a kernel thread or zombie?)")
	}
	return hwm, rss, nil
}

// CPUTime returns the CPU time process pid's threads have run so far, to
// the nanosecond: the first field of each /proc/<pid>/task/<tid>/schedstat
// summed. Sample.CPUSeconds counts in clock ticks of 10 ms, coarser than
// a benchmark turn of a few milliseconds. A thread that ended is no
// longer counted, so only a difference over a short span is meaningful.
func CPUTime(pid int) (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	var total int64
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := bytes.Fields(b)
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("procstat: %s/%s/schedstat: %w", dir, t.Name(), err)
		}
		total += ns
	}
	return time.Duration(total), nil
}

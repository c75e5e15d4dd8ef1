package harness

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes the host: CPU model (from /proc/cpuinfo), logical CPUs,
// GOMAXPROCS, memory, Go version and platform.
func Machine() string {
	return fmt.Sprintf("%s, %d logical CPUs (GOMAXPROCS %d), %s RAM, %s %s/%s",
		cpuModel(), runtime.NumCPU(), runtime.GOMAXPROCS(0), memTotal(),
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// LoadAverage returns the 1-minute load average from /proc/loadavg, or "?".
// On a shared machine it says how much the other tenants were running.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

func cpuModel() string {
	return procField("/proc/cpuinfo", "model name", "unknown CPU")
}

func memTotal() string {
	kb := procField("/proc/meminfo", "MemTotal", "")
	var n int64
	if _, err := fmt.Sscanf(kb, "%d kB", &n); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.0f GiB", float64(n)/(1<<20))
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key, def string) string {
	f, err := os.Open(path)
	if err != nil {
		return def
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return def
}

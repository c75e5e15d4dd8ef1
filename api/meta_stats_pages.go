package api

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/tsd-db/tsd/internal/jsonw"
)

// processStart is when the process started serving, the JVM page's
// runtime.startTime.
var processStart = time.Now()

// maxStackDump bounds the goroutine dump /api/stats/threads reads: a
// daemon with very many connections lists the goroutines that fit.
const maxStackDump = 16 << 20

// handleStatsPage answers StatsRpc's sub-pages with the Go runtime's
// equivalents (docs/opentsdb.md lists the mapping); false for a path that
// is none of them.
func (a *metaAPI) handleStatsPage(ctx *fasthttp.RequestCtx, sub string) bool {
	switch sub {
	case "jvm":
		writeJSON(ctx, fasthttp.StatusOK, appendRuntimeStats(nil))
	case "threads":
		writeJSON(ctx, fasthttp.StatusOK, appendGoroutines(nil))
	case "region_clients":
		// tsd has no HBase region clients.
		writeJSON(ctx, fasthttp.StatusOK, []byte("[]"))
	default:
		return false
	}
	return true
}

// appendRuntimeStats appends /api/stats/jvm's object, its JVM figures
// taken from the Go runtime: the heap as the heap, the runtime's other
// memory as non-heap, the garbage collector as one collector "go".
func appendRuntimeStats(dst []byte) []byte {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	now := time.Now()
	limit := debug.SetMemoryLimit(-1)
	if limit == 1<<63-1 {
		limit = -1 // no limit: Java's "undefined"
	}
	dst = append(dst, `{"os":{"systemLoadAverage":`...)
	dst = jsonw.AppendJavaDouble(dst, loadAverage())
	dst = append(dst, `},"runtime":{"startTime":`...)
	dst = strconv.AppendInt(dst, processStart.UnixMilli(), 10)
	dst = append(dst, `,"uptime":`...)
	dst = strconv.AppendInt(dst, now.Sub(processStart).Milliseconds(), 10)
	dst = append(dst, `,"vmName":"Go","vmVendor":"The Go Authors","vmVersion":`...)
	dst = jsonw.JSON.AppendString(dst, runtime.Version())
	dst = append(dst, `},"memory":{"heapMemoryUsage":`...)
	dst = appendMemoryUsage(dst, m.HeapAlloc, m.HeapSys, limit)
	dst = append(dst, `,"nonHeapMemoryUsage":`...)
	nonHeap := m.StackInuse + m.MSpanInuse + m.MCacheInuse + m.BuckHashSys + m.GCSys + m.OtherSys
	dst = appendMemoryUsage(dst, nonHeap, m.Sys-m.HeapSys, -1)
	dst = append(dst, `,"objectsPendingFinalization":0},"gc":{"go":{"collectionCount":`...)
	dst = strconv.AppendUint(dst, uint64(m.NumGC), 10)
	dst = append(dst, `,"collectionTime":`...)
	dst = strconv.AppendUint(dst, m.PauseTotalNs/uint64(time.Millisecond), 10)
	dst = append(dst, `}},"pools":{"heap":{"usage":`...)
	dst = appendMemoryUsage(dst, m.HeapInuse, m.HeapSys, limit)
	dst = append(dst, `,"type":"HEAP"},"stack":{"usage":`...)
	dst = appendMemoryUsage(dst, m.StackInuse, m.StackSys, -1)
	dst = append(dst, `,"type":"NON_HEAP"}}}`...)
	return dst
}

// appendMemoryUsage appends a java.lang.management.MemoryUsage as
// Jackson writes it; init is 0 (Go reserves no initial heap).
func appendMemoryUsage(dst []byte, used, committed uint64, max int64) []byte {
	dst = append(dst, `{"init":0,"used":`...)
	dst = strconv.AppendUint(dst, used, 10)
	dst = append(dst, `,"committed":`...)
	dst = strconv.AppendUint(dst, committed, 10)
	dst = append(dst, `,"max":`...)
	dst = strconv.AppendInt(dst, max, 10)
	return append(dst, '}')
}

// loadAverage is the one-minute load average, or -1 where the system
// does not report one (as Java's getSystemLoadAverage).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return -1
	}
	return v
}

// appendGoroutines appends /api/stats/threads' array, a goroutine for
// each Java thread: threadID the goroutine's id, name "goroutine <id>",
// state Java's for the goroutine's wait reason, priority 5 (Java's
// normal), interrupted false, and the stack as "function(file:line)".
func appendGoroutines(dst []byte) []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= maxStackDump {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	dst = append(dst, '[')
	first := true
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		id, state, stack, ok := parseGoroutine(g)
		if !ok {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"threadID":`...)
		dst = append(dst, id...)
		dst = append(dst, `,"priority":5,"name":"goroutine `...)
		dst = append(dst, id...)
		dst = append(dst, `","interrupted":false,"state":`...)
		dst = jsonw.JSON.AppendString(dst, javaState(state))
		dst = append(dst, `,"stack":`...)
		dst = jsonw.JSON.AppendStrings(dst, stack)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// parseGoroutine reads one goroutine of runtime.Stack's dump: its id, its
// state ("running", "chan receive, 5 minutes"...) and its frames.
func parseGoroutine(g []byte) (id []byte, state string, stack []string, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(g))
	sc.Buffer(nil, len(g)+1)
	if !sc.Scan() {
		return nil, "", nil, false
	}
	head, found := bytes.CutPrefix(sc.Bytes(), []byte("goroutine "))
	if !found {
		return nil, "", nil, false
	}
	sp := bytes.IndexByte(head, ' ')
	open, end := bytes.IndexByte(head, '['), bytes.LastIndexByte(head, ']')
	if sp < 0 || open < 0 || end < open {
		return nil, "", nil, false
	}
	id, state = bytes.Clone(head[:sp]), string(head[open+1:end])
	for sc.Scan() {
		fn := sc.Text()
		if !sc.Scan() {
			stack = append(stack, fn)
			break
		}
		loc := strings.TrimSpace(sc.Text())
		if i := strings.LastIndexByte(loc, ' '); i > 0 {
			loc = loc[:i] // the frame's "+0x1f" offset
		}
		stack = append(stack, fn+" ("+loc+")")
	}
	return id, state, stack, true
}

// javaState maps a goroutine's state to a java.lang.Thread.State name.
func javaState(s string) string {
	s, _, _ = strings.Cut(s, ",")
	switch {
	case s == "running" || s == "runnable" || s == "syscall":
		return "RUNNABLE"
	case s == "sleep" || strings.Contains(s, "timer"):
		return "TIMED_WAITING"
	case strings.Contains(s, "Lock") || strings.HasPrefix(s, "semacquire") || strings.HasPrefix(s, "sync."):
		return "BLOCKED"
	case s == "dead":
		return "TERMINATED"
	case s == "idle":
		return "NEW"
	}
	return "WAITING" // channel, select, IO wait, GC waits
}

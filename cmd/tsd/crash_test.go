package main

import (
	"bytes"
	"flag"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var crashIters = flag.Int("crash.iters", 2, "SIGKILL rounds of TestDaemonCrashUnderPutLoad (20 in the long run)")

// The crash test's load: crashClients goroutines, each writing its own
// series crash.m{g=N} in /api/put batches of crashBatch points. Point seq
// of round r is at crashT0(r) + seq*crashStepMs with the integer value
// seq, so a scanned point names its batch and its value is checked.
const (
	crashClients = 2
	crashBatch   = 250
	crashStepMs  = 100
	crashRoundS  = 300 * 3600 // seconds between rounds' time windows, whole hours
	crashBaseS   = 1356998400
)

func crashT0(round int) int64 { return (crashBaseS + int64(round)*crashRoundS) * 1000 }

// crashClient is one load goroutine's record of a round.
type crashClient struct {
	sent  int      // points sent (acknowledged or not)
	acked [][2]int // [first, end) seq spans answered 204
}

// TestDaemonCrashUnderPutLoad SIGKILLs tsd at a random moment while
// clients post /api/put batches (every other one with ?sync), restarts it
// on the same directory and checks that every acknowledged point is
// there, with its value: through /api/query on the restarted daemon after
// every kill, and exactly once through `tsd scan` of the store after a clean
// stop. Half the rounds go on loading the restarted daemon, so a kill also
// lands on a head rebuilt from its log; the others stop it cleanly.
func TestDaemonCrashUnderPutLoad(t *testing.T) {
	t.Parallel() // its own daemon
	data := t.TempDir()
	d := startDaemon(t, "--data", data)
	var pending []int // rounds not checked in the store yet
	clients := make([][]crashClient, *crashIters)
	for round := range *crashIters {
		clients[round] = crashRound(t, d, round)
		pending = append(pending, round)
		d = startDaemon(t, "--data", data)
		checkReplay(t, d, clients[round])
		for _, r := range pending {
			checkQueryRound(t, d, r, clients[r])
		}
		if round%2 == 0 && round != *crashIters-1 {
			continue
		}
		if err := d.Stop(t); err != nil {
			t.Fatalf("stop after round %d: %v\n%s", round, err, d.Logs)
		}
		for _, r := range pending {
			checkCrashRound(t, data, r, clients[r])
		}
		pending = pending[:0]
		if round != *crashIters-1 {
			d = startDaemon(t, "--data", data)
		}
	}
}

// crashRound loads d until a random moment, SIGKILLs it there and
// returns what was acknowledged.
func crashRound(t *testing.T, d *daemon, round int) []crashClient {
	cs := make([]crashClient, crashClients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs[g].load(t, "http://"+d.Addr, round, g, stop)
		}()
	}
	time.Sleep(time.Duration(100+rand.IntN(900)) * time.Millisecond)
	d.Kill()
	close(stop)
	wg.Wait()
	return cs
}

// load posts batches until stop closes or a request fails (the daemon
// died), recording the batches answered 204.
func (c *crashClient) load(t *testing.T, base string, round, g int, stop <-chan struct{}) {
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	defer client.CloseIdleConnections()
	var body []byte
	for seq := 0; ; seq += crashBatch {
		select {
		case <-stop:
			return
		default:
		}
		url := base + "/api/put"
		if (seq/crashBatch)%2 == 1 {
			url += "?sync"
		}
		body = crashBody(body[:0], round, g, seq)
		c.sent = seq + crashBatch
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusNoContent:
			c.acked = append(c.acked, [2]int{seq, seq + crashBatch})
		case http.StatusServiceUnavailable: // throttled: not acknowledged
		default:
			t.Errorf("round %d client %d: /api/put = %d %s", round, g, resp.StatusCode, msg)
			return
		}
	}
}

func crashBody(b []byte, round, g, seq int) []byte {
	b = append(b, '[')
	for i := seq; i < seq+crashBatch; i++ {
		if i > seq {
			b = append(b, ',')
		}
		b = append(b, `{"metric":"crash.m","timestamp":`...)
		b = strconv.AppendInt(b, crashT0(round)+int64(i)*crashStepMs, 10)
		b = append(b, `,"value":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"tags":{"g":"`...)
		b = strconv.AppendInt(b, int64(g), 10)
		b = append(b, `"}}`...)
	}
	return append(b, ']')
}

var replayRE = regexp.MustCompile(`msg="head replayed its log" .* samples=(\d+) bad_records=(\d+) orphan_samples=(\d+)`)

// checkReplay checks the restarted daemon's log: no bad record, and at
// least the points acknowledged in the round just killed came back from
// the log (none of their rows was due to be flushed).
func checkReplay(t *testing.T, d *daemon, cs []crashClient) {
	t.Helper()
	m := replayRE.FindStringSubmatch(d.Logs.String())
	if m == nil {
		t.Fatalf("no replay line:\n%s", d.Logs)
	}
	samples, _ := strconv.Atoi(m[1])
	acked := 0
	for _, c := range cs {
		for _, s := range c.acked {
			acked += s[1] - s[0]
		}
	}
	if m[2] != "0" || m[3] != "0" || samples < acked {
		t.Errorf("replay: samples=%s bad_records=%s orphan_samples=%s; %d points acknowledged", m[1], m[2], m[3], acked)
	}
}

// checkQueryRound reads round's window back through /api/query on the
// restarted daemon (head replayed from its log, plus the store): every
// acknowledged point is there with its value, and nothing never sent.
func checkQueryRound(t *testing.T, d *daemon, round int, cs []crashClient) {
	t.Helper()
	for g, c := range cs {
		if len(c.acked) == 0 {
			continue
		}
		m := "sum:crash.m%7Bg=" + strconv.Itoa(g) + "%7D"
		dps := d.queryDPS(t, m, crashT0(round), crashT0(round)+crashRoundS*1000-1)[""]
		for ts, v := range dps {
			ms, err := strconv.ParseInt(ts, 10, 64)
			seq := (ms - crashT0(round)) / crashStepMs
			if err != nil || (ms-crashT0(round))%crashStepMs != 0 || seq < 0 || seq >= int64(c.sent) || v != float64(seq) {
				t.Errorf("round %d client %d: /api/query point %s=%v (sent %d)", round, g, ts, v, c.sent)
			}
		}
		for _, s := range c.acked {
			for seq := s[0]; seq < s[1]; seq++ {
				ts := strconv.FormatInt(crashT0(round)+int64(seq)*crashStepMs, 10)
				if _, ok := dps[ts]; !ok {
					t.Fatalf("round %d client %d: acknowledged point %d (t=%s) missing from /api/query after restart",
						round, g, seq, ts)
				}
			}
		}
	}
}

// checkCrashRound reads round's window back with tsd scan: every
// acknowledged point is there, none twice, each with its value, and none
// that was never sent.
func checkCrashRound(t *testing.T, data string, round int, cs []crashClient) {
	t.Helper()
	start := strconv.FormatInt(crashT0(round)/1000, 10)
	end := strconv.FormatInt(crashT0(round)/1000+crashRoundS-1, 10)
	for g, c := range cs {
		code, out, errs := tsdScan(t, data, start, end, "crash.m", "g="+strconv.Itoa(g))
		if code != exitOK && c.sent > 0 && len(c.acked) > 0 {
			t.Fatalf("round %d: tsd scan g=%d: exit %d\n%s", round, g, code, errs)
		}
		seen := crashPoints(t, out, round, c.sent)
		missing, acked := 0, 0
		for _, s := range c.acked {
			for seq := s[0]; seq < s[1]; seq++ {
				acked++
				if seen[seq] == 0 {
					missing++
				}
			}
		}
		if missing > 0 {
			t.Errorf("round %d client %d: %d of %d acknowledged points missing", round, g, missing, acked)
		}
		t.Logf("round %d client %d: %d points sent, %d acknowledged, %d stored", round, g, c.sent, acked, len(seen))
	}
}

// crashPoints parses tsd scan's point lines into seq -> count, failing on
// a duplicate, a wrong value or a point never sent.
func crashPoints(t *testing.T, out string, round, sent int) map[int]int {
	t.Helper()
	seen := make(map[int]int)
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, "    ") || len(f) != 4 {
			continue
		}
		ms, err1 := strconv.ParseInt(f[0], 10, 64)
		v, err2 := strconv.Atoi(f[2])
		off := ms - crashT0(round)
		seq := int(off / crashStepMs)
		if err1 != nil || err2 != nil || off%crashStepMs != 0 || seq < 0 || seq >= sent || v != seq || f[3] != "int" {
			t.Errorf("round %d: unexpected point %q (sent %d)", round, line, sent)
			continue
		}
		if seen[seq]++; seen[seq] == 2 {
			t.Errorf("round %d: point %d stored twice", round, seq)
		}
	}
	return seen
}

package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/tsd-db/tsd/bench/procstat"
)

// stallers are connections that each sent one request and never read
// a byte of the answer.
type stallers struct {
	conns []net.Conn
}

// stall opens n connections to addr and sends req on each.
func stall(ctx context.Context, addr string, n int, req []byte) (*stallers, error) {
	s := &stallers{}
	var d net.Dialer
	for range n {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("stalled client %d: %w", len(s.conns), err)
		}
		s.conns = append(s.conns, c)
		if _, err := c.Write(req); err != nil {
			s.close()
			return nil, fmt.Errorf("stalled client %d: write the request: %w", len(s.conns), err)
		}
	}
	return s, nil
}

func (s *stallers) close() {
	for _, c := range s.conns {
		c.Close()
	}
}

// postRequest is an HTTP/1.1 POST of a JSON body.
func postRequest(addr, path string, body []byte) []byte {
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		path, addr, len(body), body)
}

// rssSampler records the largest resident set of a process, sampled every
// 100 ms.
type rssSampler struct {
	pid  int
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	max  int64
	err  error
}

func sampleRSS(pid int) *rssSampler {
	r := &rssSampler{pid: pid, stop: make(chan struct{})}
	r.wg.Add(1)
	go r.loop()
	return r
}

func (r *rssSampler) loop() {
	defer r.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		r.sample()
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
	}
}

func (r *rssSampler) sample() {
	s, err := procstat.Read(r.pid)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.err = err
		return
	}
	r.max = max(r.max, s.RSS)
}

// done stops sampling and returns the largest resident set seen.
func (r *rssSampler) done() (int64, error) {
	close(r.stop)
	r.wg.Wait()
	r.sample()
	return r.max, r.err
}

// rssNow is the resident set now.
func rssNow(pid int) (int64, error) {
	s, err := procstat.Read(pid)
	return s.RSS, err
}

// cpuNow is the process's CPU seconds so far.
func cpuNow(pid int) (float64, error) {
	s, err := procstat.Read(pid)
	return s.CPUSeconds, err
}

// settle waits until the process has used less than 0.05 CPU seconds in
// half a second (its queries are done or blocked), at most limit.
func settle(pid int, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	last, err := cpuNow(pid)
	for err == nil && time.Since(start) < limit {
		time.Sleep(500 * time.Millisecond)
		var now float64
		if now, err = cpuNow(pid); err == nil && now-last < 0.05 {
			break
		}
		last = now
	}
	return time.Since(start), err
}

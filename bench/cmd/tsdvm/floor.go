package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"

	"github.com/tsd-db/tsd/bench/queryset"
)

// The floor is what this machine charges any server for one answer: a
// process that answers every request with one fixed HTTP response, the
// bytes of tsd's answer to floorQuery, read from memory. It parses
// nothing past the end of the request head and computes nothing, so its
// mean in the same turns as tsd and VictoriaMetrics is the round trip,
// wake-ups and scheduling that every answer pays. A query answered from
// a cache (single-1h after its first run) cannot be much faster than it.
//
// It is this binary run again ("tsdvm floor"), its own process, as the
// daemons are: in the client's process it would skip a process's
// wake-up.

// floorQuery is the query the floor answers: the one the PromQL answer
// cache makes a round trip.
const floorQuery = "single-1h"

// floorOf starts a floor answering as tsd answers floorQuery, its body
// kept in dir; nil when the dataset's queries leave floorQuery out.
func floorOf(ctx context.Context, f *flags, dir string, tsd *daemon) (*daemon, error) {
	for _, q := range eligible(f) {
		if q.Name != floorQuery {
			continue
		}
		body, err := floorBody(ctx, f, tsd, q)
		if err != nil {
			return nil, err
		}
		return startFloor(ctx, dir, body)
	}
	return nil, nil
}

// floorBody fetches d's answer to q.
func floorBody(ctx context.Context, f *flags, d *daemon, q *queryset.Query) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://"+d.http+queryset.PromTarget(q, q.PromQL[0], queryset.End(f.cfg.Span)), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: status %d", d.name, floorQuery, resp.StatusCode)
	}
	return b, err
}

// startFloor starts the floor answering with body, kept in a file in dir.
func startFloor(ctx context.Context, dir string, body []byte) (*daemon, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	file := dir + "/body.json"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(file, body, 0o644); err != nil {
		return nil, err
	}
	a, err := freePort()
	if err != nil {
		return nil, err
	}
	d := &daemon{name: "floor", http: a}
	d.cmd = exec.CommandContext(ctx, self, "floor", "-addr", a, "-body", file)
	return d, d.start("/api/version")
}

// runFloor is "tsdvm floor": it serves until killed.
func runFloor(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("tsdvm floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	file := fs.String("body", "", "the answer's body")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	body, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintf(stderr, "tsdvm floor: %v\n", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "tsdvm floor: %v\n", err)
		return 1
	}
	serveFloor(ln, floorResponse(body))
	return 0
}

// floorResponse is the whole HTTP/1.1 answer carrying body.
func floorResponse(body []byte) []byte {
	r := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ")
	r = strconv.AppendInt(r, int64(len(body)), 10)
	r = append(r, "\r\n\r\n"...)
	return append(r, body...)
}

// serveFloor answers every request head on ln's connections with resp,
// until ln is closed.
func serveFloor(ln net.Listener, resp []byte) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go answerHeads(c, resp)
	}
}

// answerHeads writes resp after each request head read from c (GETs:
// no body), until c fails or closes.
func answerHeads(c net.Conn, resp []byte) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		for {
			line, err := br.ReadSlice('\n')
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return
			}
			if len(line) <= 2 && err == nil { // the empty line ending the head
				break
			}
		}
		if _, err := c.Write(resp); err != nil {
			return
		}
	}
}

package service

import (
	"bufio"
	"net"
	"strconv"
	"testing"
)

// BenchmarkTelnetPut sends put lines over loopback TCP to one connection
// and waits for the version barrier after each batch of 10,000 lines.
// Line shape: "put sys.cpu.user <ts> <int> host=web01 cpu=<0..7>".
func BenchmarkTelnetPut(b *testing.B) {
	st := newStack(b, nil)
	h, err := NewTelnetHandler(st.w, TelnetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			h.ServeConn(c)
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const batch = 10000
	var body []byte
	ts := int64(1356998400)
	br := bufio.NewReader(c)
	b.ReportAllocs()
	for b.Loop() {
		body = body[:0]
		for i := range batch {
			ts++
			body = append(body, "put sys.cpu.user "...)
			body = strconv.AppendInt(body, ts, 10)
			body = append(body, ' ')
			body = strconv.AppendInt(body, int64(i), 10)
			body = append(body, " host=web01 cpu="...)
			body = strconv.AppendInt(body, int64(i%8), 10)
			body = append(body, '\n')
		}
		body = append(body, "version\n"...)
		b.SetBytes(int64(len(body)))
		if _, err := c.Write(body); err != nil {
			b.Fatal(err)
		}
		if _, err := br.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "lines/s")
}

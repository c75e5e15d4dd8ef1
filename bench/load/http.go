package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/tsd-db/tsd/bench/gen"
)

// httpSender posts bodies; each sender has its own client so each holds
// one keep-alive connection.
type httpSender struct {
	o      *Options
	client *http.Client
	url    string
}

func newHTTPSender(o *Options) *httpSender {
	tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true, TLSClientConfig: o.TLS}
	scheme := "http://"
	if o.TLS != nil {
		scheme = "https://"
	}
	return &httpSender{o: o, client: &http.Client{Transport: tr, Timeout: o.Timeout}, url: scheme + o.Addr + o.Path}
}

func (s *httpSender) send(ctx context.Context, b body) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(b.b))
	if err != nil {
		return &connError{err}
	}
	setHeaders(req.Header, s.o.Format)
	switch {
	case s.o.User != "":
		req.SetBasicAuth(s.o.User, s.o.Password)
	case s.o.Token != "":
		req.Header.Set("Authorization", "Bearer "+s.o.Token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("post %s: %w", s.url, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("post %s: %s: %s", s.url, resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

func setHeaders(h http.Header, f gen.Format) {
	switch f {
	case gen.FormatJSON:
		h.Set("Content-Type", "application/json")
	case gen.FormatInflux:
		h.Set("Content-Type", "text/plain; charset=utf-8")
	case gen.FormatRemoteWrite:
		h.Set("Content-Type", "application/x-protobuf")
		h.Set("Content-Encoding", "snappy")
		h.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	}
}

func (s *httpSender) close() []string {
	s.client.CloseIdleConnections()
	return nil
}

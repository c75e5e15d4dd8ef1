package main

import "github.com/tsd-db/tsd/api"

// accessConfig holds the keys of browser safety and the daemon's mode.
type accessConfig struct {
	allowStateChangingGET bool   // tsd.http.allow_state_changing_get
	jsonp                 bool   // tsd.http.jsonp.enable
	corsDomains           string // tsd.http.request.cors_domains
	corsHeaders           string // tsd.http.request.cors_headers
	mode                  string // tsd.mode: rw, ro or wo
}

// Modes of tsd.mode, as OpenTSDB names them.
const (
	modeReadWrite = "rw"
	modeReadOnly  = "ro"
	modeWriteOnly = "wo"
)

// wireAccess sets the browser-safety options of opts.
func (c *config) wireAccess(opts *api.Options) {
	a := c.access
	opts.AllowStateChangingGET, opts.JSONP = a.allowStateChangingGET, a.jsonp
	opts.CORSDomains, opts.CORSHeaders = a.corsDomains, a.corsHeaders
	switch a.mode {
	case modeReadOnly:
		opts.Mode = api.ReadOnly
	case modeWriteOnly:
		opts.Mode = api.WriteOnly
	}
}

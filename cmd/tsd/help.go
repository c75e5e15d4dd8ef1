package main

import (
	"fmt"
	"io"
)

// writeHelp prints usage and every key with its type, default and
// description.
func writeHelp(w io.Writer, c *config) {
	fmt.Fprint(w, `Usage: tsd [serve] [--config FILE] [--KEY=VALUE | --KEY VALUE]...
       tsd uid [--config FILE] [--KEY=VALUE]... COMMAND [ARGS]
       tsd scan [--config FILE] [--KEY=VALUE]... START [END] METRIC [TAGK=TAGV]...
       tsd index [--config FILE] [--KEY=VALUE]... rebuild
       tsd rollup [--config FILE] [--KEY=VALUE]... rebuild [--data DIR | --url URL] START [END] [METRIC...]
       tsd repair [--config FILE] [--KEY=VALUE]...
       tsd tree [--config FILE] [--KEY=VALUE]... sync
       tsd import [--url URL | --data DIR] [--strict] FILE...
       tsd export [--data DIR | --url URL] [--format=F] START [END] [METRIC[{FILTERS}]]...
       tsd fsck [--data DIR] [--fix] [--resolve-duplicates] [START END] [METRIC...]
       tsd version | tsd --version
       tsd compact [--config FILE] [--KEY=VALUE]... [--data DIR | --url URL]

tsd is a time-series database in the lineage of OpenTSDB. "serve" (the
default command) runs the daemon: OpenTSDB's telnet protocol and HTTP API,
the Prometheus and InfluxDB write and read APIs, all on one port.

Settings come from their defaults, then the --config file (OpenTSDB's
opentsdb.conf format: "key = value" lines, # or ! comments), then flags;
each later source wins. Any key is also a flag: --tsd.network.port=4242 or
--tsd.network.port 4242. OpenTSDB keys tsd does not use are ignored with a
warning; unknown keys and bad values stop tsd at start.

Commands:
  serve          run the daemon (default)
  uid ...        read and repair the UID table (tsd uid --help)
  scan ...       print a metric's raw rows and points (tsd scan --help)
  index rebuild  build the series index from the data table (tsd index --help)
  rollup rebuild build rollup cells for stored raw data (tsd rollup --help)
  repair         rebuild a store's damaged sstables, say what was lost (tsd repair --help)
  tree sync      file every series in every enabled tree (tsd tree --help)
  import FILE... load OpenTSDB's import text format into a daemon or a store (tsd import --help)
  export ...     write points as OpenTSDB, Prometheus or Influx text (tsd export --help)
  fsck ...       check the data table and the series index, and repair (tsd fsck --help)
  version        print the version and source revision (also --version)
  compact        flush, drain and compact a store to its settled size (tsd compact --help)
  help           print this help

Flags:
  --config FILE  read settings from FILE
  --help, -h     print this help

Keys:
`)
	for _, k := range c.keys {
		alias := ""
		if k.alias != "" {
			alias = ", alias --" + k.alias
		}
		fmt.Fprintf(w, "  %s (%s%s)\n        %s [default %q]\n", k.name, k.typ, alias, k.desc, k.def)
	}
}

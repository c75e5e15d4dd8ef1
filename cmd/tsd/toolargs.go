package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// parseToolArgs splits the arguments of an offline tool (tsd uid, tsd scan)
// into positional words, --help, the tool's own flags (own reports whether
// it took a name, or an error for a refused one) and configuration flags,
// which go to config.load as cmdline flags as the daemon's would.
// Positional words never start with '-'.
func parseToolArgs(args []string, command string, isBool func(string) bool, own func(name string) (bool, error)) (pos []string, help bool, cl cmdline, err error) {
	cl = cmdline{command: command}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "h" || name == "help" {
			help = true
			continue
		}
		if took, err := own(name); err != nil || took {
			if err != nil {
				return nil, false, cl, err
			}
			continue
		}
		if !hasValue {
			if value, i, err = flagValue(args, i, name, isBool(name)); err != nil {
				return nil, false, cl, err
			}
		}
		if name == "config" {
			cl.config = value
			continue
		}
		cl.flags = append(cl.flags, setting{name: name, value: value, source: "flag --" + name})
	}
	return pos, help, cl, nil
}

// runTool loads the configuration an offline tool was given, as the daemon
// would, and runs it until it ends or a signal stops it. Configuration
// errors are printed behind tool, the run's errors behind runPrefix; an
// error with exit code exitOK becomes exitFailed.
func runTool(tool, runPrefix string, c *config, cl cmdline, log *slog.Logger, stderr io.Writer, run func(context.Context) (int, error)) int {
	if err := c.load(cl, log); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", tool, err)
		return exitUsage
	}
	c.bigtableEmulator = os.Getenv("BIGTABLE_EMULATOR_HOST")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", runPrefix, err)
		if code == exitOK {
			code = exitFailed
		}
	}
	return code
}

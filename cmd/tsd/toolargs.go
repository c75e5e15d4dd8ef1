package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
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

// toolStart returns what an offline tool starts from: a log of warnings
// and errors on stderr and the default configuration, which its command
// line then sets.
func toolStart(stderr io.Writer) (*slog.Logger, *config) {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), newConfig()
}

// toolUsage answers a tool's command line before it runs, from its parse
// error, --help and whether the positional words it needs are missing:
// an error goes to stderr with the way to the help (exitUsage), --help
// prints usage to stdout (exitOK), missing words print it too
// (exitUsage). ok says the tool may run.
func toolUsage(tool, usage string, err error, help, missing bool, stdout, stderr io.Writer) (code int, ok bool) {
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", tool, err, tool)
		return exitUsage, false
	case help:
		fmt.Fprint(stdout, usage)
		return exitOK, false
	case missing:
		fmt.Fprint(stdout, usage)
		return exitUsage, false
	}
	return exitOK, true
}

// takeFlags removes the flags a tool owns from args: valued ones (with
// "=V" or the next word) into vals, bool ones into bools. The rest goes to
// parseToolArgs.
func takeFlags(args []string, valued, bools []string) (rest []string, vals map[string]string, set map[string]bool, err error) {
	vals, set = map[string]string{}, map[string]bool{}
	for i := 0; i < len(args); i++ {
		name, value, has := cutFlag(args[i])
		switch {
		case name != "" && contains(valued, name):
			if !has {
				if i+1 >= len(args) {
					return nil, nil, nil, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			vals[name] = value
		case name != "" && contains(bools, name):
			b := true
			if has {
				if b, err = strconv.ParseBool(value); err != nil {
					return nil, nil, nil, fmt.Errorf("flag --%s: %q is not a boolean", name, value)
				}
			}
			set[name] = b
		default:
			rest = append(rest, args[i])
		}
	}
	return rest, vals, set, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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

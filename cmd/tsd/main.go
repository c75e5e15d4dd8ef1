package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// Exit codes of run.
const (
	exitOK     = 0
	exitFailed = 1 // the daemon failed while starting or running
	exitUsage  = 2 // bad command line or configuration
)

// run is tsd without the process around it: it parses args, loads the
// configuration and runs the command, logging to stderr.
func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && args[0] == "uid" {
		return runUID(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "scan" {
		return runScan(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "index" {
		return runIndex(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rollup" {
		return runRollup(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "tree" {
		return runTree(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "repair" {
		return runRepair(args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version" || args[0] == "-version") {
		return runVersion(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "import" {
		return runImport(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "export" {
		return runExport(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "fsck" {
		return runFsck(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "compact" {
		return runCompact(args[1:], stdout, stderr)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	c := newConfig()
	cl, err := parseArgs(args, c.isBoolFlag)
	if err != nil {
		fmt.Fprintf(stderr, "tsd: %v\nRun 'tsd --help' for usage.\n", err)
		return exitUsage
	}
	if cl.command == "help" {
		writeHelp(stdout, c)
		return exitOK
	}
	if err := c.load(cl, log); err != nil {
		fmt.Fprintf(stderr, "tsd: %v\n", err)
		return exitUsage
	}
	log = c.obs.newLogger(stderr) // tsd.log.level and tsd.log.format
	// The emulator is the Bigtable client's convention, not a tsd key.
	c.bigtableEmulator = getenv("BIGTABLE_EMULATOR_HOST")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); stop() }() // a second signal kills at once
	if err := serve(ctx, c, log); err != nil {
		log.Error("tsd failed", "err", err)
		return exitFailed
	}
	return exitOK
}

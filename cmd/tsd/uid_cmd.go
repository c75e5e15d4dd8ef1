package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/tsd-db/tsd/schema"
	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/uid"
)

// uidUsage documents `tsd uid`. Output lines of grep and assign are
// "<kind> <name>: <UID hex>", e.g. "metrics sys.cpu.user: 000001": OpenTSDB's
// `metrics foo: [0, 0, 1]` with the UID written as the HTTP API writes it
// (uppercase hex on the kind's width). A name may contain ": ", so parse
// the UID from the end of the line.
const uidUsage = `Usage: tsd uid [--config FILE] [--KEY=VALUE]... COMMAND [ARGS]

Reads and repairs the UID table (tsd.storage.hbase.uid_table). On the
embedded engine the daemon must be stopped first: the store is locked while
it runs. Settings (directory, tables, format, UID widths) are the daemon's
keys; the format and widths come from the store's record.

Commands:
  grep [KIND] [REGEXP]        list names of KIND (metrics, tagk, tagv; all
                              kinds when omitted) matching the RE2 REGEXP
                              (all when omitted), in byte order
  assign KIND NAME...         assign UIDs to names (existing names keep theirs)
  rename KIND NAME NEWNAME    rename a UID's name; fails if NEWNAME exists
  delete KIND NAME            remove a name's forward and reverse maps
                              (its UID is never reused; data stays)
  fsck [fix]                  check the table; with fix (or --fix) repair it

Flags:
  --fix                       same as the fsck argument fix
  --ignore-case, -i           grep ignores case
  --help, -h                  print this help

Output: grep and assign print "KIND NAME: UID" lines with the UID in
uppercase hex, e.g. "metrics sys.cpu.user: 000001". fsck prints one line per
problem and a summary; it exits 1 when errors remain.
`

// uidCmd is the parsed `tsd uid` command line.
type uidCmd struct {
	args       []string // positional: the subcommand and its arguments
	fix        bool
	ignoreCase bool
	help       bool
}

// runUID is `tsd uid ...`: it loads the daemon's settings from the flags
// and --config, opens the store and runs one subcommand.
func runUID(args []string, stdout, stderr io.Writer) int {
	log, c := toolStart(stderr)
	uc, cl, err := parseUIDArgs(args, c.isBoolFlag)
	if code, ok := toolUsage("tsd uid", uidUsage, err, uc.help, len(uc.args) == 0, stdout, stderr); !ok {
		return code
	}
	return runTool("tsd uid", "tsd uid "+uc.args[0], c, cl, log, stderr, func(ctx context.Context) (int, error) {
		return uc.run(ctx, c, log, stdout)
	})
}

// parseUIDArgs separates positional arguments, uid's own flags and
// configuration flags (handed to config.load as cmdline flags).
func parseUIDArgs(args []string, isBool func(string) bool) (uidCmd, cmdline, error) {
	var uc uidCmd
	var err error
	var cl cmdline
	uc.args, uc.help, cl, err = parseToolArgs(args, "uid", isBool, func(name string) (bool, error) {
		switch name {
		case "fix":
			uc.fix = true
		case "i", "ignore-case":
			uc.ignoreCase = true
		default:
			return false, nil
		}
		return true, nil
	})
	return uc, cl, err
}

// uidWrites are the subcommands that may write, and so record the store's
// settings first as the daemon does.
var uidWrites = map[string]bool{"assign": true, "rename": true, "delete": true}

// run opens the store and dispatches the subcommand.
func (uc *uidCmd) run(ctx context.Context, c *config, log *slog.Logger, out io.Writer) (int, error) {
	sub, rest := uc.args[0], uc.args[1:]
	check, ok := uidArity[sub]
	if !ok {
		return exitUsage, fmt.Errorf("unknown command (want grep, assign, rename, delete or fsck)")
	}
	if err := check(rest); err != nil {
		return exitUsage, err
	}
	db, err := openUIDStore(ctx, c, log)
	if err != nil {
		return exitFailed, err
	}
	defer db.Close()
	write := uidWrites[sub] || (sub == "fsck" && uc.fixing(rest))
	u, _, err := openUIDTable(ctx, c, db, write, log)
	if err != nil {
		return exitFailed, err
	}
	switch sub {
	case "grep":
		return uc.grep(ctx, u, rest, out)
	case "assign":
		return uidAssign(ctx, u, rest, out)
	case "rename":
		return uidRename(ctx, u, rest, out)
	case "delete":
		return uidDelete(ctx, u, rest, out)
	}
	return uidFsck(ctx, u, uc.fixing(rest), out)
}

func (uc *uidCmd) fixing(rest []string) bool {
	return uc.fix || (len(rest) == 1 && rest[0] == "fix")
}

// uidArity checks each subcommand's positional arguments.
var uidArity = map[string]func([]string) error{
	"grep":   func(a []string) error { return argCount(a, 0, 2, "grep [KIND] [REGEXP]") },
	"assign": func(a []string) error { return argCount(a, 2, -1, "assign KIND NAME...") },
	"rename": func(a []string) error { return argCount(a, 3, 3, "rename KIND NAME NEWNAME") },
	"delete": func(a []string) error { return argCount(a, 2, 2, "delete KIND NAME") },
	"fsck": func(a []string) error {
		if len(a) > 1 || (len(a) == 1 && a[0] != "fix") {
			return fmt.Errorf("usage: fsck [fix]")
		}
		return nil
	},
}

func argCount(a []string, lo, hi int, usage string) error {
	if len(a) < lo || (hi >= 0 && len(a) > hi) {
		return fmt.Errorf("usage: %s", usage)
	}
	return nil
}

// openUIDStore opens the configured engine; on the embedded one a held
// directory lock means the daemon is running.
func openUIDStore(ctx context.Context, c *config, log *slog.Logger) (storage.DB, error) {
	if c.engine != "bigtable" {
		if _, err := os.Stat(c.dataDir); err != nil {
			return nil, fmt.Errorf("no store (tsd.storage.directory): %w", err)
		}
	}
	db, err := c.openStore(ctx, log, nil)
	if err != nil && c.engine != "bigtable" && isLockError(err) {
		return nil, fmt.Errorf("the store in %s is locked by a running tsd: stop the daemon first (%w)", c.dataDir, err)
	}
	return db, err
}

// isLockError recognises a directory lock held by another process (EAGAIN,
// EACCES from fcntl) or by this one (pebble's in-process check).
func isLockError(err error) bool {
	return errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) ||
		strings.Contains(err.Error(), "lock held by current process")
}

// openUIDTable opens the UID table with the format and widths of the
// store's record, and returns them too. Writing commands record the
// settings of a new store, as the daemon does; reading ones never write.
func openUIDTable(ctx context.Context, c *config, db storage.DB, write bool, log *slog.Logger) (*uid.UIDs, schema.Settings, error) {
	if write {
		if _, err := storage.EnsureTables(ctx, db, uid.TableSpec(c.uidTable), schema.MetaTableSpec(c.metaTable)); err != nil {
			return nil, schema.Settings{}, err
		}
	}
	uidTbl, err := db.Table(ctx, c.uidTable)
	if err != nil {
		return nil, schema.Settings{}, fmt.Errorf("open the UID table (is %s a tsd store?): %w", c.dataDir, err)
	}
	s, err := storeRecord(ctx, c, db, uidTbl, write)
	if err != nil {
		return nil, schema.Settings{}, err
	}
	u, err := uid.New(uidTbl, &uid.Options{Widths: s.Widths, Format: s.Format, Logger: log})
	return u, s, err
}

// storeRecord returns the recorded settings (recording them when write).
func storeRecord(ctx context.Context, c *config, db storage.DB, uidTbl storage.Table, write bool) (schema.Settings, error) {
	meta, err := db.Table(ctx, c.metaTable)
	if errors.Is(err, storage.ErrNotFound) && !write {
		meta = nil // an OpenTSDB store without tsd's meta table
	} else if err != nil {
		return schema.Settings{}, err
	}
	want := c.storeSettings()
	if meta == nil {
		return want, nil
	}
	if write {
		return schema.EnsureRecord(ctx, meta, uid.MaxIDProbe(uidTbl), want)
	}
	s, _, err := schema.CheckRecord(ctx, meta, uid.MaxIDProbe(uidTbl), want)
	return s, err
}

// grep lists matching names of one kind or all.
func (uc *uidCmd) grep(ctx context.Context, u *uid.UIDs, a []string, out io.Writer) (int, error) {
	kinds := uid.Kinds[:]
	if len(a) > 0 {
		if k, err := uid.ParseKind(a[0]); err == nil {
			kinds, a = []uid.Kind{k}, a[1:]
		} else if len(a) == 2 {
			return exitUsage, err
		}
	}
	pattern := ""
	if len(a) > 0 {
		pattern = a[0]
	}
	re, prefix, err := grepPattern(pattern, uc.ignoreCase)
	if err != nil {
		return exitUsage, err
	}
	for _, k := range kinds {
		err := u.ForEach(ctx, k, prefix, func(name string, id uid.ID) error {
			if re.MatchString(name) {
				_, err := fmt.Fprintf(out, "%s %s: %X\n", k, name, u.AppendID(nil, k, id))
				return err
			}
			return nil
		})
		if err != nil {
			return exitFailed, err
		}
	}
	return exitOK, nil
}

// grepPattern compiles the expression and, when it is anchored with ^ and
// starts with a literal, returns that literal so only its range is scanned.
func grepPattern(pattern string, ignoreCase bool) (*regexp.Regexp, string, error) {
	flags := ""
	if ignoreCase {
		flags = "(?i)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, "", err
	}
	if ignoreCase || !strings.HasPrefix(pattern, "^") {
		return re, "", nil
	}
	rest, err := regexp.Compile(pattern[1:])
	if err != nil {
		return re, "", nil
	}
	prefix, _ := rest.LiteralPrefix()
	return re, prefix, nil
}

func uidAssign(ctx context.Context, u *uid.UIDs, a []string, out io.Writer) (int, error) {
	k, err := uid.ParseKind(a[0])
	if err != nil {
		return exitUsage, err
	}
	var failed []error
	for _, name := range a[1:] {
		id, err := u.Assign(ctx, k, []byte(name))
		if err != nil {
			failed = append(failed, err)
			continue
		}
		fmt.Fprintf(out, "%s %s: %X\n", k, name, u.AppendID(nil, k, id))
	}
	return exitOK, errors.Join(failed...)
}

func uidRename(ctx context.Context, u *uid.UIDs, a []string, out io.Writer) (int, error) {
	k, err := uid.ParseKind(a[0])
	if err != nil {
		return exitUsage, err
	}
	if err := u.Rename(ctx, k, a[1], a[2]); err != nil {
		return exitFailed, err
	}
	id, err := u.Lookup(ctx, k, []byte(a[2]))
	if err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(out, "%s %s: %X (was %s)\n", k, a[2], u.AppendID(nil, k, id), a[1])
	return exitOK, nil
}

func uidDelete(ctx context.Context, u *uid.UIDs, a []string, out io.Writer) (int, error) {
	k, err := uid.ParseKind(a[0])
	if err != nil {
		return exitUsage, err
	}
	id, err := u.Lookup(ctx, k, []byte(a[1]))
	if err != nil {
		return exitFailed, err
	}
	if err := u.Delete(ctx, k, a[1]); err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(out, "deleted %s %s: %X\n", k, a[1], u.AppendID(nil, k, id))
	return exitOK, nil
}

// uidFsck prints one line per problem, then a summary; it fails when errors
// remain unfixed.
func uidFsck(ctx context.Context, u *uid.UIDs, fix bool, out io.Writer) (int, error) {
	r, err := u.Fsck(ctx, fix)
	if err != nil {
		return exitFailed, err
	}
	for _, p := range r.Problems {
		level, outcome := "ERROR", ""
		switch {
		case p.Class == uid.MaxIDCountMismatch:
			level = "WARN"
		case p.Fixed:
			outcome = " [fixed]"
		case p.FixErr != "":
			outcome = " [fix failed: " + p.FixErr + "]"
		case fix:
			outcome = " [no automatic fix]"
		}
		fmt.Fprintf(out, "%s %s %s: %s%s\n", level, p.Kind, p.Class, p.Message, outcome)
	}
	for _, k := range uid.Kinds {
		fmt.Fprintf(out, "%s: max id %d, %d forward and %d reverse mappings\n", k, r.MaxID[k], r.Forward[k], r.Reverse[k])
	}
	fmt.Fprintf(out, "%d cells analyzed; %d errors found, %d unfixed\n", r.Cells, r.Errors(), r.Unfixed())
	if r.Unfixed() > 0 {
		return exitFailed, nil
	}
	return exitOK, nil
}

package main

import (
	"fmt"
	"strings"
)

// setting is one key = value from the configuration file or a flag.
type setting struct {
	name, value string
	source      string // where it came from, for messages: "tsd.conf:3", "flag --port"
}

// cmdline is the parsed command line.
type cmdline struct {
	command string    // "serve" (the default) or "help"
	config  string    // the --config file, "" for none
	flags   []setting // --key=value settings, in order
}

// commands are the subcommands parseArgs accepts; run dispatches
// `tsd uid ...` before parsing, since uid has flags of its own.
var commands = []string{"serve", "help"}

// parseArgs parses `tsd [command] [--config FILE] [--key=value | --key value]...`.
// Flags take one or two dashes. A bool key given without "=value" is true,
// unless the next argument is a bool literal, which is then its value.
// isBool tells whether a flag name (key or alias) is a bool key.
func parseArgs(args []string, isBool func(string) bool) (cmdline, error) {
	cl := cmdline{command: "serve"}
	command := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			if err := cl.setCommand(a, command); err != nil {
				return cmdline{}, err
			}
			command = true
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "h" || name == "help" {
			cl.command = "help"
			continue
		}
		if !hasValue {
			var err error
			if value, i, err = flagValue(args, i, name, isBool(name)); err != nil {
				return cmdline{}, err
			}
		}
		if name == "config" {
			cl.config = value
			continue
		}
		cl.flags = append(cl.flags, setting{name: name, value: value, source: "flag --" + name})
	}
	return cl, nil
}

// setCommand records the positional argument a as the command.
func (cl *cmdline) setCommand(a string, seen bool) error {
	if seen {
		return fmt.Errorf("unexpected argument %q", a)
	}
	for _, c := range commands {
		if a == c {
			if cl.command != "help" { // --help wins wherever it is
				cl.command = a
			}
			return nil
		}
	}
	if a == "uid" {
		return fmt.Errorf("uid must be the first argument: tsd uid [flags] COMMAND")
	}
	return fmt.Errorf("unknown command %q (want serve, help or uid)", a)
}

// flagValue takes the value of flag args[i] from the next argument and
// returns it with the index of the last argument used.
func flagValue(args []string, i int, name string, isBool bool) (string, int, error) {
	next := i + 1
	if isBool {
		if next < len(args) {
			if _, err := parseBool(args[next]); err == nil {
				return args[next], next, nil
			}
		}
		return "true", i, nil
	}
	if next == len(args) {
		return "", i, fmt.Errorf("flag --%s needs a value", name)
	}
	return args[next], next, nil
}

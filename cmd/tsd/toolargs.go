package main

import "strings"

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

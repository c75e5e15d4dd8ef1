package service

import (
	"bytes"
	"testing"

	"github.com/tsd-db/tsd/ingest/telnet"
)

// FuzzParseAuthLine: any line parses without panic; an auth line yields
// its method and exactly the words after it, anything else is not one.
func FuzzParseAuthLine(f *testing.F) {
	for _, s := range []string{"auth basic writer w-pass", "auth token abc", "auth", "auth  basic\tu p", "put m 1 1 a=b", "authx basic u p", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		method, args, ok := parseAuthLine([]byte(line))
		words := bytes.Fields([]byte(line))
		isAuth := len(words) >= 2 && string(words[0]) == "auth"
		if ok != isAuth {
			t.Fatalf("%q: ok=%v, want %v", line, ok, isAuth)
		}
		if !ok {
			return
		}
		if method != string(words[1]) || len(args) != len(words)-2 {
			t.Fatalf("%q: method %q args %q", line, method, args)
		}
		for i, a := range args {
			if a != string(words[i+2]) {
				t.Fatalf("%q: arg %d = %q", line, i, a)
			}
		}
	})
}

// TestCommandAccess: only version, help and exit are open; ingest needs
// write, cache drops and shutdown admin, anything else read.
func TestCommandAccess(t *testing.T) {
	for line, want := range map[string]Access{
		"version": AccessNone, "help": AccessNone, "exit": AccessNone,
		"put m 1 1 a=b": AccessWrite, "rollup x": AccessWrite, "histogram x": AccessWrite,
		"stats": AccessRead, "dropcaches": AccessAdmin, "diediedie": AccessAdmin, "nonsense": AccessRead, "": AccessRead,
	} {
		cmd, _ := telnet.SplitCommand([]byte(line))
		if got := commandAccess(cmd); got != want {
			t.Errorf("%q needs %v, want %v", line, got, want)
		}
	}
}

package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	c := newConfig()
	for _, tc := range []struct {
		args []string
		want cmdline
	}{
		{nil, cmdline{command: "serve"}},
		{[]string{"serve"}, cmdline{command: "serve"}},
		{[]string{"help"}, cmdline{command: "help"}},
		{[]string{"-h"}, cmdline{command: "help"}},
		{[]string{"serve", "--port=1", "--help"}, cmdline{command: "help",
			flags: []setting{{"port", "1", "flag --port"}}}},
		{[]string{"--config", "a.conf", "--port", "0", "-data=/d", "--tsd.network.bind=::1"}, cmdline{
			command: "serve", config: "a.conf", flags: []setting{
				{"port", "0", "flag --port"}, {"data", "/d", "flag --data"},
				{"tsd.network.bind", "::1", "flag --tsd.network.bind"}}}},
		{[]string{"--config=x=y.conf", "--tsd.core.tag.allow_specialchars="}, cmdline{
			command: "serve", config: "x=y.conf", flags: []setting{
				{"tsd.core.tag.allow_specialchars", "", "flag --tsd.core.tag.allow_specialchars"}}}},
		// A bool flag alone is true; a following bool literal is its value.
		{[]string{"--tsd.no_diediedie", "serve"}, cmdline{command: "serve",
			flags: []setting{{"tsd.no_diediedie", "true", "flag --tsd.no_diediedie"}}}},
		{[]string{"--tsd.no_diediedie", "false", "--tsd.core.auto_create_metrics"}, cmdline{command: "serve",
			flags: []setting{{"tsd.no_diediedie", "false", "flag --tsd.no_diediedie"},
				{"tsd.core.auto_create_metrics", "true", "flag --tsd.core.auto_create_metrics"}}}},
		// An unknown flag still takes a value; load rejects its name.
		{[]string{"--nope", "1"}, cmdline{command: "serve", flags: []setting{{"nope", "1", "flag --nope"}}}},
	} {
		got, err := parseArgs(tc.args, c.isBoolFlag)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	c := newConfig()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run"}, `unknown command "run" (want serve, help or uid)`},
		{[]string{"--port=1", "uid"}, "uid must be the first argument"},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"--port"}, "flag --port needs a value"},
		{[]string{"--config"}, "flag --config needs a value"},
	} {
		_, err := parseArgs(tc.args, c.isBoolFlag)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseArgs(%q) = %v, want error %q", tc.args, err, tc.want)
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// operationsDoc is the operator's reference, relative to this package.
var operationsDoc = filepath.Join("..", "..", "docs", "operations.md")

// machineDefaults are keys whose default depends on the machine, so the
// doc states it in words rather than as --help prints it here.
var machineDefaults = map[string]bool{"tsd.query.max_concurrent": true}

// TestOperationsDocListsEveryKey keeps docs/operations.md from falling
// behind keyTable: every key has a row in its "Configuration keys" tables
// with the default --help prints (empty as "empty"), no row names a key
// tsd does not know, and its list of ignored OpenTSDB keys is exactly
// openTSDBKeys.
func TestOperationsDocListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows, ignored := parseOperationsDoc(t, doc)
	c := newConfig()
	for _, k := range c.keys {
		row, ok := rows[k.name]
		if !ok {
			t.Errorf("%s: no row for key %s in its Configuration keys tables", operationsDoc, k.name)
			continue
		}
		want := "`" + k.def + "`"
		if k.def == "" {
			want = "empty"
		}
		if !machineDefaults[k.name] && row[2] != want {
			t.Errorf("%s: %s has default %s, want %s as tsd --help says", operationsDoc, k.name, row[2], want)
		}
	}
	for name := range rows {
		if c.byName[name] == nil || c.byName[name].name != name {
			t.Errorf("%s documents key %s, which keyTable does not have", operationsDoc, name)
		}
	}
	listed := setOf(ignored...)
	for name := range openTSDBKeys {
		if !listed[name] {
			t.Errorf("%s: OpenTSDB key %s, which tsd ignores, is missing from its list", operationsDoc, name)
		}
	}
	for _, name := range ignored {
		if !openTSDBKeys[name] {
			t.Errorf("%s lists %s among the ignored OpenTSDB keys, but openTSDBKeys does not have it", operationsDoc, name)
		}
	}
}

// parseOperationsDoc returns the cells of every table row of the
// "Configuration keys" section, by the key in its first cell, and the
// words of the code block under "OpenTSDB keys tsd ignores".
func parseOperationsDoc(t *testing.T, doc []byte) (map[string][]string, []string) {
	t.Helper()
	rows := map[string][]string{}
	var ignored []string
	var inKeys, inIgnored, inBlock bool
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inKeys = line == "## Configuration keys"
			inIgnored = false
		case strings.HasPrefix(line, "### "):
			inIgnored = inKeys && line == "### OpenTSDB keys tsd ignores"
		case inIgnored && strings.HasPrefix(line, "```"):
			inBlock = !inBlock
		case inIgnored && inBlock:
			ignored = append(ignored, strings.Fields(line)...)
		case inKeys && strings.HasPrefix(line, "| `"):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			if len(cells) != 4 {
				t.Errorf("%s: key row without 4 cells: %s", operationsDoc, line)
				continue
			}
			name := strings.Trim(cells[0], "`")
			if _, dup := rows[name]; dup {
				t.Errorf("%s: key %s has two rows", operationsDoc, name)
			}
			rows[name] = cells
		}
	}
	if len(rows) == 0 || len(ignored) == 0 {
		t.Fatalf("%s: found %d key rows and %d ignored keys: has the section layout changed?", operationsDoc, len(rows), len(ignored))
	}
	return rows, ignored
}

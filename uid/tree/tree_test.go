package tree

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tsd-db/tsd/storage"
	"github.com/tsd-db/tsd/storage/pebble"
)

func openPebbleStore(t *testing.T) (*Store, storage.Table) {
	t.Helper()
	db, err := pebble.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return openStore(t, db)
}

func openStore(t *testing.T, db storage.DB) (*Store, storage.Table) {
	t.Helper()
	ctx := context.Background()
	if err := db.EnsureTable(ctx, TableSpec(DefaultTable)); err != nil {
		t.Fatal(err)
	}
	tbl, err := db.Table(ctx, DefaultTable)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStore(tbl)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Unix(1356998400, 0) }
	return s, tbl
}

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

// testRules is OpenTSDB's TestTree.buildTestRuleSet, the rule set of its
// TreeBuilder tests.
func testRules() []*RuleEdit {
	rule := func(level, order int, typ RuleType, field, regex, sep, format, desc string) *RuleEdit {
		e := &RuleEdit{}
		e.TreeID, e.Level, e.Order, e.Type = 1, level, order, typ
		e.Mark("type", true)
		e.Mark("level", level != 0)
		e.Mark("order", order != 0)
		for k, v := range map[string]string{"field": field, "regex": regex, "separator": sep, "displayFormat": format, "description": desc} {
			if err := e.SetString(k, v); err != nil {
				panic(err)
			}
		}
		return e
	}
	host := `^.*\.([a-zA-Z]{3,4})[0-9]{0,1}\..*\..*$`
	svc := `^([a-zA-Z]+)(\-|[0-9])*.*\..*$`
	return []*RuleEdit{
		rule(0, 0, RuleTagK, "fqdn", host, "", "", "Datacenter"),
		rule(0, 1, RuleTagK, "host", host, "", "", "Datacenter"),
		rule(1, 0, RuleTagK, "fqdn", svc, "", "", "Service"),
		rule(1, 1, RuleTagK, "host", svc, "", "", "Service"),
		rule(2, 0, RuleTagK, "fqdn", "", "", "", "Hostname"),
		rule(2, 1, RuleTagK, "host", "", "", "", "Hostname"),
		rule(3, 0, RuleMetric, "", "", `\.`, "", "Metric split"),
		rule(4, 0, RuleTagK, "type", "", "", "", "Type Tag"),
		rule(4, 1, RuleTagK, "method", "", "", "", "Method Tag"),
		rule(4, 2, RuleTagK, "port", "", "", "Port: {value}", "Port Tag"),
	}
}

// testMeta is TestTreeBuilder's series: sys.cpu.0 host=web-01.lga.mysite.com type=user.
func testMeta() *Meta {
	return &Meta{TSUID: "0102030405", Metric: Name{Name: "sys.cpu.0"}, Tags: []Tag{
		{K: Name{Name: "host"}, V: Name{Name: "web-01.lga.mysite.com"}},
		{K: Name{Name: "type"}, V: Name{Name: "user"}},
	}}
}

func makeTestTree(t *testing.T, s *Store) *Tree {
	t.Helper()
	ctx := context.Background()
	tr, err := s.CreateTree(ctx, &TreeEdit{Name: strp("Test Tree"), Description: strp("My Description"),
		Notes: strp("Details"), Enabled: boolp(true)})
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != 1 {
		t.Fatalf("first tree id %d, want 1", tr.ID)
	}
	for _, e := range testRules() {
		if _, err := s.PutRule(ctx, e, false); err != nil {
			t.Fatalf("rule %s: %v", e.Rule.String(), err)
		}
	}
	tr, err = s.Tree(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func cellOf(t *testing.T, tbl storage.Table, row []byte, q string) []byte {
	t.Helper()
	cells, err := tbl.Get(context.Background(), row, &storage.ReadOptions{Qualifiers: [][]byte{[]byte(q)}})
	if err != nil {
		t.Fatalf("row %X column %q: %v", row, q, err)
	}
	return cells[0].Value
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := ParseBranchID(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testProcess(t *testing.T, s *Store, tbl storage.Table) {
	ctx := context.Background()
	tr := makeTestTree(t, s)

	// The definition row as OpenTSDB writes it (Tree.toStorageJson,
	// TreeRule serialised by Jackson).
	if got, want := string(cellOf(t, tbl, []byte{0, 1}, "tree")),
		`{"name":"Test Tree","description":"My Description","notes":"Details","strictMatch":false,"created":1356998400,"enabled":true,"storeFailures":false}`; got != want {
		t.Errorf("tree column\n got %s\nwant %s", got, want)
	}
	if got, want := string(cellOf(t, tbl, []byte{0, 1}, "tree_rule:4:2")),
		`{"type":"TAGK","field":"port","regex":"","separator":"","description":"Port Tag","notes":"","level":4,"order":2,"treeId":1,"customField":"","regexGroupIdx":0,"displayFormat":"Port: {value}"}`; got != want {
		t.Errorf("rule column\n got %s\nwant %s", got, want)
	}

	// TestTreeBuilder.processTimeseriesMetaDefaults: 7 rows (the root and
	// six branches), the deepest 00010001A2460001CB54247F72020001BECD000181A800000030
	// named "0" holding the leaf "user".
	if _, err := s.Process(ctx, tr, testMeta()); err != nil {
		t.Fatal(err)
	}
	var rows [][]byte
	sc := tbl.Scan(ctx, &storage.ScanOptions{})
	for sc.Next() {
		rows = append(rows, bytes.Clone(sc.Row().Key))
	}
	sc.Close()
	if len(rows) != 7 {
		t.Errorf("%d rows, want 7: %X", len(rows), rows)
	}
	deep := mustHex(t, "00010001A2460001CB54247F72020001BECD000181A800000030")
	if got, want := string(cellOf(t, tbl, deep, "branch")),
		`{"path":{"0":"ROOT","1":"lga","2":"web","3":"web-01.lga.mysite.com","4":"sys","5":"cpu","6":"0"},"displayName":"0"}`; got != want {
		t.Errorf("branch column\n got %s\nwant %s", got, want)
	}
	cells, err := tbl.Get(ctx, deep, nil)
	if err != nil || len(cells) != 2 {
		t.Fatalf("deepest branch: %d cells, %v; want 2 (branch and leaf)", len(cells), err)
	}
	var leaf []byte
	for _, c := range cells {
		if bytes.HasPrefix(c.Qualifier, []byte("leaf:")) {
			if !bytes.Equal(c.Qualifier, leafQualifier("user")) {
				t.Errorf("leaf qualifier %X, want leaf: + hash of user %X", c.Qualifier, leafQualifier("user"))
			}
			leaf = c.Value
		}
	}
	if got, want := string(leaf), `{"displayName":"user","tsuid":"0102030405"}`; got != want {
		t.Errorf("leaf column %s, want %s", got, want)
	}
	if got, want := string(cellOf(t, tbl, []byte{0, 1}, "branch")), `{"path":{"0":"ROOT"},"displayName":"ROOT"}`; got != want {
		t.Errorf("root branch column %s, want %s", got, want)
	}

	// Reading the root: its child lga, no leaves.
	root, err := s.Branch(ctx, []byte{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(root.AppendJSON(nil)); got != `{"leaves":null,"branches":[{"leaves":null,"branches":null,"path":{"0":"ROOT","1":"lga"},"treeId":1,"displayName":"lga","branchId":"00010001A246","depth":1}],"path":{"0":"ROOT"},"treeId":1,"displayName":"ROOT","branchId":"0001","depth":0}` {
		t.Errorf("root branch answer %s", got)
	}
	b, err := s.Branch(ctx, deep)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Leaves) != 1 || b.Leaves[0].TSUID != "0102030405" || b.Leaves[0].DisplayName != "user" || b.Depth() != 6 {
		t.Errorf("deepest branch %+v", b)
	}

	// A second series with the same path and leaf name collides; with
	// storeFailures the collision is recorded.
	if _, err := s.EditTree(ctx, &TreeEdit{ID: 1, StoreFailure: boolp(true)}, false); err != nil {
		t.Fatal(err)
	}
	tr, _ = s.Tree(ctx, 1)
	other := testMeta()
	other.TSUID = "0102030406"
	res, err := s.Process(ctx, tr, other)
	if err != nil || res.Collision != "0102030405" {
		t.Fatalf("collision: %q, %v", res.Collision, err)
	}
	col, err := s.Collisions(ctx, 1, nil)
	if err != nil || len(col) != 1 || col["0102030406"] != "0102030405" {
		t.Errorf("collisions %v, %v", col, err)
	}
	if got := cellOf(t, tbl, []byte{0, 1, 1}, "tree_collision:\x01\x02\x03\x04\x06"); string(got) != "0102030405" {
		t.Errorf("collision cell %q", got)
	}

	// Strict matching: a series without a type tag fails level 4.
	if _, err := s.EditTree(ctx, &TreeEdit{ID: 1, StrictMatch: boolp(true)}, false); err != nil {
		t.Fatal(err)
	}
	tr, _ = s.Tree(ctx, 1)
	nm := testMeta()
	nm.TSUID = "01020304"
	nm.Tags = nm.Tags[:1]
	res, err = s.Process(ctx, tr, nm)
	if err != nil || res.NotMatched != "[1:4:2:TAGK]" {
		t.Fatalf("not matched %q, %v", res.NotMatched, err)
	}
	got, err := s.NotMatched(ctx, 1, []string{"01020304"})
	if err != nil || got["01020304"] != "[1:4:2:TAGK]" {
		t.Errorf("not matched %v, %v", got, err)
	}

	// Delete without the definition keeps tree and rules; with it, all.
	if err := s.DeleteTree(ctx, 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Branch(ctx, deep); !errors.Is(err, ErrNotFound) {
		t.Errorf("branch after delete: %v", err)
	}
	if tr, err := s.Tree(ctx, 1); err != nil || len(tr.Rules) != 10 {
		t.Errorf("tree after delete: %v, %v", tr, err)
	}
	if c, _ := s.Collisions(ctx, 1, nil); len(c) != 0 {
		t.Errorf("collisions after delete: %v", c)
	}
	if err := s.DeleteTree(ctx, 1, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tree(ctx, 1); !errors.Is(err, ErrNotFound) {
		t.Errorf("tree after delete definition: %v", err)
	}
}

func TestProcessPebble(t *testing.T) {
	s, tbl := openPebbleStore(t)
	testProcess(t, s, tbl)
}

// TestDocumentedBranchIDs checks the tree guide's example: "sys" hashes to
// 0001BECD below root 0001, and its child "cpu" to 000181A8.
func TestDocumentedBranchIDs(t *testing.T) {
	b := &Branch{TreeID: 1, DisplayName: "cpu", Path: []string{"ROOT", "sys", "cpu"}}
	if got := b.IDString(); got != "00010001BECD000181A8" {
		t.Errorf("branch id %s", got)
	}
	if JavaHash("sys") != 0x1BECD || JavaHash("") != 0 {
		t.Errorf("hash")
	}
}

// TestBuilderMessages checks /api/tree/test's messages and branch for
// TestTreeBuilder's series, and the display formats of its
// processTimeseriesMetaFormat* tests.
func TestBuilderMessages(t *testing.T) {
	tr := &Tree{ID: 1}
	for _, e := range testRules() {
		r := e.Rule
		tr.addRule(&r)
	}
	res := Build(tr, testMeta())
	if len(res.Messages) == 0 || res.Messages[0] != "Processing rule: [1:0:0:TAGK]" ||
		res.Messages[1] != "No match on tagk [fqdn] for rule: [1:0:0:TAGK]" {
		t.Errorf("messages %q", res.Messages)
	}
	want := "Depth [8] Adding leaf [name: user tsuid: 0102030405] to parent branch [Name: [0]]"
	if !strings.Contains(strings.Join(res.Messages, "\n"), want) {
		t.Errorf("messages lack %q:\n%s", want, strings.Join(res.Messages, "\n"))
	}
	var names []string
	for b := res.Root; b != nil; {
		names = append(names, b.DisplayName)
		if b.Branches == nil {
			if len(b.Leaves) != 1 || b.Leaves[0].DisplayName != "user" {
				t.Errorf("deepest branch leaves %+v", b.Leaves)
			}
			break
		}
		b = b.Branches[0]
	}
	if got := strings.Join(names, "/"); got != "ROOT/lga/web/web-01.lga.mysite.com/sys/cpu/0" {
		t.Errorf("path %s", got)
	}

	for format, want := range map[string]string{
		"OV: {ovalue}":                        "OV: web-01.lga.mysite.com",
		"V: {value}":                          "V: web",
		"TSUID: {tsuid}":                      "TSUID: 0102030405",
		"TAGNAME: {tag_name}":                 "TAGNAME: host",
		"{ovalue}:{value}:{tag_name}:{tsuid}": "web-01.lga.mysite.com:web:host:0102030405",
		"OVERRIDE":                            "OVERRIDE",
	} {
		tr := &Tree{ID: 1}
		r := testRules()[3].Rule // level 1 order 1: host, service regex
		r.Level, r.DisplayFormat = 0, format
		tr.addRule(&r)
		res := Build(tr, testMeta())
		if res.Root.Branches == nil {
			// one level: the name is a leaf of the root
			if len(res.Root.Leaves) != 1 || res.Root.Leaves[0].DisplayName != want {
				t.Errorf("format %q: leaves %+v, want %q", format, res.Root.Leaves, want)
			}
			continue
		}
		t.Errorf("format %q: branches %+v", format, res.Root.Branches)
	}
}

func TestJavaSplit(t *testing.T) {
	for in, want := range map[string]string{"sys.cpu.0": "sys|cpu|0", "a..b.": "a||b", "nodot": "nodot", "..": "", ".a": "|a"} {
		re := mustRe(`\.`)
		if got := strings.Join(javaSplit(re, in), "|"); got != want {
			t.Errorf("split %q = %q, want %q", in, got, want)
		}
	}
}

func mustRe(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// TestEditSemantics checks OpenTSDB's POST (merge the changed fields) and
// PUT (replace every field) on trees and rules, and the 304 cases
// (TestTreeRpc's handleTreeQSPut / handleRuleQSPostNoChanges).
func TestEditSemantics(t *testing.T) {
	s, _ := openPebbleStore(t)
	ctx := context.Background()
	makeTestTree(t, s)
	tr, err := s.EditTree(ctx, &TreeEdit{ID: 1, Description: strp("HelloWorld")}, false)
	if err != nil || tr.Name != "Test Tree" || tr.Description != "HelloWorld" || !tr.Enabled {
		t.Errorf("POST: %+v, %v", tr, err)
	}
	if _, err := s.EditTree(ctx, &TreeEdit{ID: 1, Name: strp("")}, false); !errors.Is(err, ErrNoChange) {
		t.Errorf("POST of nothing: %v, want ErrNoChange", err)
	}
	tr, err = s.EditTree(ctx, &TreeEdit{ID: 1, Description: strp("HelloWorld")}, true)
	if err != nil || tr.Name != "" || tr.Notes != "" || tr.Enabled || tr.Description != "HelloWorld" || tr.Created != 1356998400 {
		t.Errorf("PUT: %+v, %v", tr, err)
	}
	if _, err := s.EditTree(ctx, &TreeEdit{ID: 9, Enabled: boolp(true)}, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("edit of tree 9: %v", err)
	}

	// A rule: POST of an unchanged field is 304, POST merges, PUT replaces.
	e := &RuleEdit{}
	e.TreeID, e.Level = 1, 1
	e.Mark("level", true)
	if _, err := s.PutRule(ctx, e, false); !errors.Is(err, ErrNoChange) {
		t.Errorf("rule POST without changes: %v", err)
	}
	_ = e.SetString("notes", "Service rule")
	r, err := s.PutRule(ctx, e, false)
	if err != nil || r.Notes != "Service rule" || r.Field != "fqdn" || r.Type != RuleTagK {
		t.Errorf("rule POST: %+v, %v", r, err)
	}
	e.Type = RuleMetric
	e.Mark("type", true)
	r, err = s.PutRule(ctx, e, true)
	if err != nil || r.Notes != "Service rule" || r.Field != "" || r.Regex != "" || r.Type != RuleMetric {
		t.Errorf("rule PUT: %+v, %v", r, err)
	}
	bad := &RuleEdit{}
	bad.TreeID, bad.Level, bad.Type = 1, 7, RuleTagK
	bad.Mark("type", true)
	if _, err := s.PutRule(ctx, bad, false); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Missing field name required for TAGK rule") {
		t.Errorf("tagk rule without a field: %v", err)
	}
	if err := s.DeleteRules(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if tr, _ := s.Tree(ctx, 1); tr.Rules != nil || !strings.Contains(string(tr.AppendJSON(nil)), `"rules":null`) {
		t.Errorf("rules after DeleteRules: %+v", tr.Rules)
	}
}

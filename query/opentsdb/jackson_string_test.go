package opentsdb

import (
	"strings"
	"testing"

	"github.com/tsd-db/tsd/query/tsquery"
)

// TestAppendStringIsJackson: strings are escaped as OpenTSDB's Jackson
// writer escapes them: \b and \f by name, other control bytes as upper-case
// \u00XX, DEL kept, invalid UTF-8 as U+FFFD (valid JSON).
func TestAppendStringIsJackson(t *testing.T) {
	in := "a\"\\\bb\f\x01\x1f\x7f\xffé"
	want := `"a\"\\\b` + "b" + `\f\u0001\u001F` + "\x7f\uFFFDé" + `"`
	got := string(appendSubQuery(nil, &tsquery.SubQuery{Aggregator: in, Metric: in}, ""))
	if prefix := `{"aggregator":` + want + `,"metric":` + want + `,`; !strings.HasPrefix(got, prefix) {
		t.Errorf("appendSubQuery = %q, want it to begin %q", got, prefix)
	}
}

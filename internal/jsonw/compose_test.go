package jsonw

import "testing"

type tag struct{ Key, Value string }

func TestComposites(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{string(JSON.AppendNullable(nil, "")), `null`},
		{string(Jackson.AppendNullable(nil, "a\f")), `"a\f"`},
		{string(JSON.AppendStrings(nil, nil)), `[]`},
		{string(HTML.AppendStrings(nil, []string{"a<", "b"})), `["a\u003c","b"]`},
		{string(Jackson.AppendPair(nil, "k\x01", "v")), `"k\u0001":"v"`},
		{string(HTML.AppendKey(nil, "<")), `"\u003c":`},
		{string(JSON.AppendSortedMap(nil, nil)), `{}`},
		{string(JSON.AppendSortedMap(nil, map[string]string{"b": "2", "a": "1", "B": "3"})), `{"B":"3","a":"1","b":"2"}`},
		{string(AppendTags(JSON, nil, []tag{{"b", "1"}, {"a", "<"}})), `{"b":"1","a":"<"}`},
		{string(AppendTags[tag](HTML, nil, nil)), `{}`},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

package annotation

import (
	"errors"
	"testing"
)

func TestAppendJSONOrder(t *testing.T) {
	a := Annotation{TSUID: "000001000001000001", StartTime: 1369141261, EndTime: 5,
		Description: "Testing \"Annotations\"", Notes: "line\nnext\x01", Custom: map[string]string{"z": "1", "dept": "ops"}}
	want := `{"tsuid":"000001000001000001","description":"Testing \"Annotations\"","notes":"line\nnext\u0001",` +
		`"custom":{"dept":"ops","z":"1"},"startTime":1369141261,"endTime":5}`
	if got := string(AppendJSON(nil, &a)); got != want {
		t.Fatalf("AppendJSON =\n%s\nwant\n%s", got, want)
	}
	g := Annotation{StartTime: 1}
	if got := string(AppendJSON(nil, &g)); got != `{"tsuid":"","description":"","notes":"","startTime":1,"endTime":0}` {
		t.Fatalf("global AppendJSON = %s", got)
	}
	want = `{"startTime":1,"endTime":0,"description":"","notes":"","custom":null}`
	if got := string(AppendStorageJSON(nil, &g)); got != want {
		t.Fatalf("AppendStorageJSON = %s, want %s", got, want)
	}
}

func TestDecodeLenient(t *testing.T) {
	a, err := Decode([]byte(`{"startTime":"1388450562","endTime":12.9,"unknown":[1,2],"custom":{"n":42,"b":true,"s":"x","z":null},"notes":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.StartTime != 1388450562 || a.EndTime != 12 || a.Custom["n"] != "42" || a.Custom["b"] != "true" ||
		a.Custom["s"] != "x" || a.Notes != "" || a.Given != FieldEndTime|FieldCustom {
		t.Fatalf("Decode = %+v", a)
	}
	for _, bad := range []string{``, `[]`, `{"startTime":"abc"}`, `{"custom":{"a":{}}}`, `{"description":1}`, `{} {}`, `{"startTime":1e300}`} {
		if _, err := Decode([]byte(bad)); !errors.Is(err, ErrInvalid) && err == nil {
			t.Errorf("Decode(%q) = nil error", bad)
		}
	}
	list, err := DecodeList([]byte(`[{"startTime":1,"description":"a"},{"tsuid":"00","startTime":2}]`))
	if err != nil || len(list) != 2 || list[0].Given != FieldDescription || list[1].TSUID != "00" {
		t.Fatalf("DecodeList = %+v %v", list, err)
	}
	if _, err := DecodeList([]byte(`{"startTime":1}`)); err == nil {
		t.Fatal("DecodeList accepted a single object")
	}
}

// FuzzDecode: no panics, and whatever decodes survives the storage round
// trip unchanged.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"tsuid":"000001000001000001","startTime":1388450562,"endTime":1419984000,"description":"Hello!","notes":"My Notes","custom":{"owner":"ops"}}`,
		`{"startTime":1328140801,"endTime":1328140803,"description":"Global 2","notes":"Nothing"}`,
		`{"startTime":"12","custom":{"a":1}}`, `[1]`, `{"description":"\u00e9\ud800"}`, `nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Decode(b)
		if err != nil {
			return
		}
		enc := AppendStorageJSON(nil, &a)
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", enc, err)
		}
		if string(AppendStorageJSON(nil, &back)) != string(enc) || back.Given != a.Given {
			t.Fatalf("round trip changed %s", enc)
		}
		_ = AppendJSON(nil, &a)
	})
}

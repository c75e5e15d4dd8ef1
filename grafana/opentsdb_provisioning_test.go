package grafana

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestProvisioningOpenTSDB checks the OpenTSDB data source file Grafana
// loads: a proxied opentsdb data source at tsd's default port in 2.4 mode
// (tsdbVersion 4), second resolution, Grafana's default lookup limit.
func TestProvisioningOpenTSDB(t *testing.T) {
	b, err := os.ReadFile("provisioning/datasources/tsd-opentsdb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, UID, Type, Access, URL string
			JSONData                     map[string]any `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.APIVersion != 1 || len(f.Datasources) != 1 {
		t.Fatalf("apiVersion %d, %d data sources", f.APIVersion, len(f.Datasources))
	}
	ds := f.Datasources[0]
	if ds.Type != "opentsdb" || ds.Access != "proxy" || ds.URL != "http://localhost:4242" || ds.UID != "tsd-opentsdb" || ds.Name == "" {
		t.Errorf("data source %+v", ds)
	}
	for k, want := range map[string]int{"tsdbVersion": 4, "tsdbResolution": 1, "lookupLimit": 1000} {
		if got, ok := ds.JSONData[k].(int); !ok || got != want {
			t.Errorf("jsonData.%s = %#v, want %d", k, ds.JSONData[k], want)
		}
	}
}

package grafana

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// dataSource is one entry of a Grafana data source provisioning file.
type dataSource struct {
	Name, UID, Type, Access, URL string
	JSONData                     map[string]any `yaml:"jsonData"`
}

// provisionedSource reads a provisioning file that must hold exactly one
// data source (apiVersion 1), proxied to tsd's default port, and returns
// it.
func provisionedSource(t *testing.T, path string) dataSource {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		APIVersion  int          `yaml:"apiVersion"`
		Datasources []dataSource `yaml:"datasources"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.APIVersion != 1 || len(f.Datasources) != 1 {
		t.Fatalf("%s: apiVersion %d, %d data sources", path, f.APIVersion, len(f.Datasources))
	}
	ds := f.Datasources[0]
	if ds.Access != "proxy" || ds.URL != "http://localhost:4242" || ds.UID == "" || ds.Name == "" {
		t.Errorf("%s: data source %+v", path, ds)
	}
	return ds
}

// TestProvisioningPrometheus checks the data source file Grafana loads:
// a proxied Prometheus data source at tsd's default port, POST queries.
func TestProvisioningPrometheus(t *testing.T) {
	ds := provisionedSource(t, "provisioning/datasources/tsd-prometheus.yaml")
	if ds.Type != "prometheus" {
		t.Errorf("type %q, want prometheus", ds.Type)
	}
	if ds.JSONData["httpMethod"] != "POST" || ds.JSONData["prometheusType"] != "Prometheus" {
		t.Errorf("jsonData %v", ds.JSONData)
	}
}

// TestProvisioningOpenTSDB checks the OpenTSDB data source file Grafana
// loads: a proxied opentsdb data source at tsd's default port in 2.4 mode
// (tsdbVersion 4), second resolution, Grafana's default lookup limit.
func TestProvisioningOpenTSDB(t *testing.T) {
	ds := provisionedSource(t, "provisioning/datasources/tsd-opentsdb.yaml")
	if ds.Type != "opentsdb" || ds.UID != "tsd-opentsdb" {
		t.Errorf("type %q uid %q, want opentsdb, tsd-opentsdb", ds.Type, ds.UID)
	}
	for k, want := range map[string]int{"tsdbVersion": 4, "tsdbResolution": 1, "lookupLimit": 1000} {
		if got, ok := ds.JSONData[k].(int); !ok || got != want {
			t.Errorf("jsonData.%s = %#v, want %d", k, ds.JSONData[k], want)
		}
	}
}

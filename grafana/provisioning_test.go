package grafana

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestProvisioningPrometheus checks the data source file Grafana loads:
// a proxied Prometheus data source at tsd's default port, POST queries.
func TestProvisioningPrometheus(t *testing.T) {
	b, err := os.ReadFile("provisioning/datasources/tsd-prometheus.yaml")
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
	if ds.Type != "prometheus" || ds.Access != "proxy" || ds.URL != "http://localhost:4242" || ds.UID == "" || ds.Name == "" {
		t.Errorf("data source %+v", ds)
	}
	if ds.JSONData["httpMethod"] != "POST" || ds.JSONData["prometheusType"] != "Prometheus" {
		t.Errorf("jsonData %v", ds.JSONData)
	}
}

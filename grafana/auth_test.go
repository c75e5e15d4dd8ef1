package grafana

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
)

// basicAuthExample returns the data source of a provisioning file with
// its commented basic-auth lines uncommented, as an operator turning
// access control on would.
func basicAuthExample(t *testing.T, path string) (user, password string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	on := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "# basicAuth: true") {
			on = true
		}
		if on {
			l = strings.Replace(l, "# ", "", 1)
		}
		lines = append(lines, l)
	}
	var f struct {
		Datasources []struct {
			BasicAuth      bool              `yaml:"basicAuth"`
			BasicAuthUser  string            `yaml:"basicAuthUser"`
			SecureJSONData map[string]string `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &f); err != nil {
		t.Fatalf("%s with basic auth uncommented: %v", path, err)
	}
	if len(f.Datasources) != 1 || !f.Datasources[0].BasicAuth || f.Datasources[0].BasicAuthUser == "" ||
		f.Datasources[0].SecureJSONData["basicAuthPassword"] == "" {
		t.Fatalf("%s: no commented basic-auth example: %+v", path, f.Datasources)
	}
	ds := f.Datasources[0]
	return ds.BasicAuthUser, ds.SecureJSONData["basicAuthPassword"]
}

// TestProvisioningBasicAuth: each provisioning file's commented basic-auth
// example, uncommented, names a user and password; with that user in
// tsd's users file (role read), every request Grafana's OpenTSDB data
// source sends besides queries, and the Prometheus data source's, is
// served with Grafana's Basic credentials and refused 401 without them.
func TestProvisioningBasicAuth(t *testing.T) {
	user, password := basicAuthExample(t, "provisioning/datasources/tsd-opentsdb.yaml")
	pu, pp := basicAuthExample(t, "provisioning/datasources/tsd-prometheus.yaml")
	if pu != user || pp != password {
		t.Fatalf("the two examples differ: %s/%s and %s/%s", user, password, pu, pp)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(users, []byte("users:\n  - name: "+user+"\n    password_bcrypt: \""+string(h)+"\"\n    role: read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "--tsd.auth.config", users)
	reqs := metadataRequests(t)
	reqs["prometheus_labels"] = "/api/v1/labels"
	reqs["prometheus_query"] = "/api/v1/query?query=up"
	do := func(path string, basic bool) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+d.Addr+path, nil)
		if basic {
			req.Header.Set("Authorization", "Basic "+basicToken(user, password))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for name, path := range reqs {
		if code, body := do(path, true); code == 401 || code == 403 || code >= 500 {
			t.Errorf("%s with Grafana's credentials = %d %s", name, code, body)
		}
		if code, _ := do(path, false); code != 401 {
			t.Errorf("%s without credentials = %d, want 401", name, code)
		}
	}
}

// basicToken is the Basic credential as Go's http.Request.SetBasicAuth,
// which Grafana's proxy uses, makes it.
func basicToken(user, password string) string {
	req := &http.Request{Header: http.Header{}, URL: &url.URL{}}
	req.SetBasicAuth(user, password)
	return strings.TrimPrefix(req.Header.Get("Authorization"), "Basic ")
}

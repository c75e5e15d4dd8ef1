package grafana

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/tsd-db/tsd/internal/daemontest"
)

// panelTarget is one PromQL query of a dashboard panel.
type panelTarget struct {
	panel, expr string
}

// dashboardTargets reads every panel's PromQL targets from the dashboard
// JSON, rows' nested panels included.
func dashboardTargets(t *testing.T, path string) []panelTarget {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Title   string
		Type    string
		Targets []struct{ Expr string }
		Panels  []json.RawMessage
	}
	var d struct {
		UID    string
		Panels []json.RawMessage
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []panelTarget
	var walk func([]json.RawMessage)
	walk = func(ps []json.RawMessage) {
		for _, raw := range ps {
			var p panel
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatalf("%s: panel: %v", path, err)
			}
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				out = append(out, panelTarget{p.Title, tg.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if d.UID == "" || len(out) == 0 {
		t.Fatalf("%s: uid %q, %d targets", path, d.UID, len(out))
	}
	return out
}

// grafanaVars replaces the dashboard's variables as Grafana would for
// a one-minute rate window and every instance.
var grafanaVars = strings.NewReplacer("$__rate_interval", "1m", "$instance", ".+")

// exposedNames are the sample names of a /metrics exposition: a
// histogram's _bucket, _sum and _count, a summary's own name with them.
func exposedNames(t *testing.T, body string) map[string]bool {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	names := map[string]bool{}
	for n, f := range fams {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[n], names[n+"_sum"], names[n+"_count"] = true, true, true
		default:
			names[n] = true
		}
	}
	return names
}

// selectorNames are the metric names a PromQL expression selects.
func selectorNames(t *testing.T, expr string) []string {
	t.Helper()
	e, err := parser.ParseExpr(expr)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	var names []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, vs.Name)
		}
		return nil
	})
	return names
}

// seriesOf runs an instant PromQL query on d and returns how many series
// it answered.
func seriesOf(t *testing.T, d *daemontest.Daemon, expr string) int {
	t.Helper()
	code, body := d.Get(t, "/api/v1/query?query="+url.QueryEscape(expr))
	var ans struct {
		Data struct{ Result []json.RawMessage }
	}
	if err := json.Unmarshal([]byte(body), &ans); code != 200 || err != nil {
		t.Fatalf("%s = %d %s (%v)", expr, code, body, err)
	}
	return len(ans.Data.Result)
}

// TestDashboardPanels runs every panel query of grafana/dashboards/tsd.json
// against a real daemon that scrapes itself every second: each must name
// only metrics tsd exposes and answer at least one series once the daemon
// has had some traffic (a good and a bad put, a telnet put, a query, a
// 404).
func TestDashboardPanels(t *testing.T) {
	targets := dashboardTargets(t, "dashboards/tsd.json")
	d := startDaemon(t, "--tsd.stats.self_scrape_interval=1s")
	base := "http://" + d.Addr
	now := time.Now().Unix()
	for _, body := range []string{
		fmt.Sprintf(`{"metric":"dash.m","timestamp":%d,"value":1,"tags":{"h":"a"}}`, now),
		fmt.Sprintf(`{"metric":"dash.m","timestamp":%d,"value":"bad","tags":{"h":"a"}}`, now),
	} {
		resp, err := http.Post(base+"/api/put", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	c, err := net.Dial("tcp", d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "put dash.t %d 1 h=a\nversion\n", now)
	c.Close()
	d.Get(t, "/api/query?start=1h-ago&m=sum:dash.m")
	d.Get(t, "/no/such/route")

	_, body := d.Get(t, "/metrics")
	exposed := exposedNames(t, body)
	for _, tg := range targets {
		for _, n := range selectorNames(t, grafanaVars.Replace(tg.expr)) {
			if !exposed[n] {
				t.Errorf("panel %q names %s, which /metrics does not expose", tg.panel, n)
			}
		}
	}
	if t.Failed() {
		return
	}
	// Rates need two scrapes in their window: poll until every panel
	// answers, or report those that never did.
	missing := targets
	deadline := time.Now().Add(90 * time.Second)
	for len(missing) > 0 && time.Now().Before(deadline) {
		var still []panelTarget
		for _, tg := range missing {
			if seriesOf(t, d, grafanaVars.Replace(tg.expr)) == 0 {
				still = append(still, tg)
			}
		}
		missing = still
		if len(missing) > 0 {
			time.Sleep(500 * time.Millisecond) // the next self-scrape; the deadline bounds the wait
		}
	}
	for _, tg := range missing {
		t.Errorf("panel %q: %s answers no series", tg.panel, tg.expr)
	}
}

// TestProvisioningDashboards checks the dashboard provider Grafana loads:
// one file provider whose folder holds tsd.json.
func TestProvisioningDashboards(t *testing.T) {
	b, err := os.ReadFile("provisioning/dashboards/tsd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name, Type string
			Options    struct{ Path string }
		}
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.APIVersion != 1 || len(f.Providers) != 1 || f.Providers[0].Type != "file" || f.Providers[0].Options.Path == "" {
		t.Errorf("provisioning/dashboards/tsd.yaml = %+v", f)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name, Type string
				Current    struct{ Value any }
			}
		}
	}
	b, err = os.ReadFile("dashboards/tsd.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	// The data source variable defaults to the provisioned Prometheus
	// data source (provisioning/datasources/tsd-prometheus.yaml).
	ds := provisionedSource(t, "provisioning/datasources/tsd-prometheus.yaml")
	found := false
	for _, v := range dash.Templating.List {
		if v.Type == "datasource" && v.Current.Value == ds.UID {
			found = true
		}
	}
	if !found {
		t.Errorf("dashboard has no data source variable defaulting to %s", ds.UID)
	}
}

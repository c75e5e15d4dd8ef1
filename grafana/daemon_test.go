package grafana

import (
	"testing"

	"github.com/tsd-db/tsd/internal/daemontest"
)

// startDaemon runs tsd on an ephemeral 127.0.0.1 port over a fresh data
// directory (args may name another) and waits for it to log its address.
// The process is stopped when the test ends, and a stop that fails fails
// the test.
func startDaemon(t *testing.T, args ...string) *daemontest.Daemon {
	t.Helper()
	d := daemontest.Start(t, append([]string{"--data", t.TempDir()}, args...)...)
	t.Cleanup(func() {
		if err := d.Stop(t); err != nil {
			t.Errorf("tsd: %v\n%s", err, d.Logs)
		}
	})
	return d
}

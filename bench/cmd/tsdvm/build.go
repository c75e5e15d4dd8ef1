package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// vmVersion is the VictoriaMetrics release measured.
const vmVersion = "v1.151.0"

const vmPackage = "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics"

// victoriaMetrics returns the path of the VictoriaMetrics binary: cached
// under the user cache directory by version, else built into a temporary
// directory with go install and moved there.
func victoriaMetrics(ctx context.Context, logf func(string, ...any)) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "tsd-bench", "victoria-metrics-"+vmVersion)
	bin := filepath.Join(dir, "victoria-metrics")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp, err := os.MkdirTemp("", "tsdvm-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	logf("building VictoriaMetrics %s from the module proxy (once; cached in %s)", vmVersion, dir)
	cmd := exec.CommandContext(ctx, "go", "install", vmPackage+"@"+vmVersion)
	// Outside this module, so tsd's go.mod never sees it.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w\n%s", vmPackage, vmVersion, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.Rename(filepath.Join(tmp, "victoria-metrics"), bin); err != nil {
		return "", fmt.Errorf("cache the binary: %w", err)
	}
	return bin, nil
}

// buildTSD builds ./cmd/tsd of the current module into dir.
func buildTSD(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "tsd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tsd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tsd (run from the repository root): %w\n%s", err, out)
	}
	return bin, nil
}

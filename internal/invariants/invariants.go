package invariants

import "fmt"

// AssertionFailedf reports an impossible state: it panics when Enabled and
// otherwise returns an error the caller must propagate.
func AssertionFailedf(format string, args ...any) error {
	err := fmt.Errorf("assertion failed: "+format, args...)
	if Enabled {
		panic(err)
	}
	return err
}

//go:build !unix

package du

import "io/fs"

// allocated returns info's length: this platform's stat gives no block
// count.
func allocated(info fs.FileInfo) int64 { return info.Size() }

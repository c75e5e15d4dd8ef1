package pebble

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tsd-db/tsd/internal/durable"
)

// catalogFileName is the copy of the table catalog kept beside the store.
// The catalog is a few keys in one block of one sstable: were that block
// damaged, every table's data would be orphaned, so Open falls back to the
// copy when the catalog cannot be read, and Repair writes lost entries back
// from it. The format (doc.go) ends with a checksum; a damaged copy is
// ignored and written again from the store.
const catalogFileName = "TSD-CATALOG"

var (
	catalogFileMagic = []byte("tsd-catalog\x01")
	castagnoli       = crc32.MakeTable(crc32.Castagnoli)
	errCatalogFile   = errors.New("bad catalog copy")
)

// appendCatalogFile encodes the catalog: magic, next id, the entries in name
// order (name and catalog value, each with a uvarint length) and a CRC32C
// of everything before it.
func appendCatalogFile(dst []byte, tables map[string]*table, nextID uint32) []byte {
	dst = append(dst, catalogFileMagic...)
	dst = binary.AppendUvarint(dst, uint64(nextID))
	dst = binary.AppendUvarint(dst, uint64(len(tables)))
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		t := tables[name]
		spec := appendSpec(nil, t.id, t.state.Load().spec)
		dst = binary.AppendUvarint(dst, uint64(len(name)))
		dst = append(dst, name...)
		dst = binary.AppendUvarint(dst, uint64(len(spec)))
		dst = append(dst, spec...)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst, castagnoli))
}

// catalogEntry is one table of a catalog copy.
type catalogEntry struct {
	name string
	spec []byte // the catalog value
}

// parseCatalogFile decodes a catalog copy.
func parseCatalogFile(b []byte) ([]catalogEntry, uint32, error) {
	if len(b) < len(catalogFileMagic)+4 || !bytes.HasPrefix(b, catalogFileMagic) {
		return nil, 0, errCatalogFile
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", errCatalogFile)
	}
	r := uvarintReader{src: body[len(catalogFileMagic):]}
	next, n := r.next(), r.next()
	var out []catalogEntry
	for i := uint64(0); i < n && r.err == nil; i++ {
		name := r.bytes(r.next())
		spec := r.bytes(r.next())
		out = append(out, catalogEntry{name: string(name), spec: spec})
	}
	if r.err != nil || len(r.src) != 0 || next > 1<<32-1 {
		return nil, 0, fmt.Errorf("%w: truncated or trailing bytes", errCatalogFile)
	}
	return out, uint32(next), nil
}

// saveCatalogFile writes the catalog copy when it differs from the
// catalog; the caller holds cat. A failure is logged: the store's own
// catalog stays authoritative.
func (d *DB) saveCatalogFile() {
	fs, path := d.opts.FS, d.opts.FS.PathJoin(d.dir, catalogFileName)
	b := appendCatalogFile(nil, d.cat.tables, d.cat.nextID)
	if old, err := readFile(fs, path); err == nil && bytes.Equal(old, b) {
		return
	}
	if err := durable.WriteFile(fs, path, b, vfs.WriteCategoryUnspecified); err != nil {
		d.opts.Logger.Error("pebble: write the catalog copy", "file", path, "err", err)
	}
}

// loadCatalogFile fills the catalog from its copy; the caller holds cat
// or is Open.
func (d *DB) loadCatalogFile() error {
	b, err := readFile(d.opts.FS, d.opts.FS.PathJoin(d.dir, catalogFileName))
	if err != nil {
		return err
	}
	entries, next, err := parseCatalogFile(b)
	if err != nil {
		return err
	}
	tables := make(map[string]*table, len(entries))
	for _, e := range entries {
		id, spec, err := parseSpec(e.name, e.spec)
		if err != nil {
			return fmt.Errorf("%w: %w", errCatalogFile, err)
		}
		tables[e.name] = newTable(d, id, spec)
	}
	d.cat.tables, d.cat.nextID = tables, next
	return nil
}

func readFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

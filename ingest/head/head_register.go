package head

import (
	"fmt"
	"slices"
)

// register has the registrar record the series of ss it does not know yet
// and then marks them registered: with one RegisterSeriesBatch call when
// the registrar takes batches, else one RegisterSeries per series. On error
// none of ss is marked (some may be registered: registration is
// idempotent, the next commit naming them registers them again). keys is
// scratch space, returned for reuse.
func (h *Head) register(ss []*memSeries, keys [][]byte) ([][]byte, error) {
	keys = keys[:0]
	for _, s := range ss {
		if !s.registered.Load() {
			keys = append(keys, keyBytes(s.key))
		}
	}
	if len(keys) == 0 {
		return keys, nil
	}
	err := h.callRegistrar(keys)
	clear(keys) // keep no series' key alive
	if err != nil {
		return keys, err
	}
	for _, s := range ss {
		h.activate(s)
	}
	return keys, nil
}

// registerChunk bounds the keys of one RegisterSeriesBatch call, so that a
// log series record of many thousand keys (replay into an index that lost
// them) is not one call under the index's store timeout.
const registerChunk = 1024

// callRegistrar registers keys, registerChunk at a time when the registrar
// takes batches.
func (h *Head) callRegistrar(keys [][]byte) error {
	r := h.opts.Registrar
	switch {
	case r == nil:
		return nil
	case h.batch != nil && len(keys) > 1:
		for c := range slices.Chunk(keys, registerChunk) {
			if err := h.batch.RegisterSeriesBatch(c); err != nil {
				return fmt.Errorf("ingest: register %d new series: %w", len(keys), err)
			}
		}
		return nil
	}
	for _, k := range keys {
		if err := r.RegisterSeries(k); err != nil {
			return fmt.Errorf("ingest: register series %x: %w", k, err)
		}
	}
	return nil
}

// activate marks s registered: from now on commits let it hold points.
func (h *Head) activate(s *memSeries) {
	if s.registered.CompareAndSwap(false, true) {
		h.nseries.Add(1)
	}
}

package harness

import (
	"github.com/tsd-db/tsd/bench/codecbench"
	"github.com/tsd-db/tsd/bench/gen"
)

func encodedRows(e *Env, vm gen.ValueMode) (*codecbench.Encoded, error) {
	return Cached(e, "codec-"+vm.String(), func() (*codecbench.Encoded, error) {
		return codecbench.Encode(e.datasetConfig(vm))
	})
}

func denseBytes(vm gen.ValueMode) Measure {
	return func(e *Env) (float64, error) {
		enc, err := encodedRows(e, vm)
		if err != nil {
			return 0, err
		}
		return enc.DenseBytesPerPoint(), nil
	}
}

func denseDecode(vm gen.ValueMode) Measure {
	return func(e *Env) (float64, error) {
		enc, err := encodedRows(e, vm)
		if err != nil {
			return 0, err
		}
		return enc.DecodeDense()
	}
}

func xorDecode(vm gen.ValueMode) Measure {
	return func(e *Env) (float64, error) {
		enc, err := encodedRows(e, vm)
		if err != nil {
			return 0, err
		}
		return enc.DecodeXOR()
	}
}

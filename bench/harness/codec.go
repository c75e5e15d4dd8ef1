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
	return decodeRate(vm, (*codecbench.Encoded).DecodeDense)
}

func xorDecode(vm gen.ValueMode) Measure {
	return decodeRate(vm, (*codecbench.Encoded).DecodeXOR)
}

func decodeRate(vm gen.ValueMode, decode func(*codecbench.Encoded) (float64, error)) Measure {
	return func(e *Env) (float64, error) {
		enc, err := encodedRows(e, vm)
		if err != nil {
			return 0, err
		}
		d, err := e.Time(func() error {
			_, err := decode(enc)
			return err
		})
		if err != nil {
			return 0, err
		}
		return rate(enc.Points, d)
	}
}

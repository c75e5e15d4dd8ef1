package agg

import "github.com/tsd-db/tsd/series"

// stream is one series' pipeline: raw points, then the optional
// downsampler, then the optional rate.
type stream struct {
	src   rawSource
	ds    downsampler
	hasDS bool
	rate  bool
	rt    rater
	err   error
}

// reset wires s to it for spec.
func (s *stream) reset(it series.Iterator, spec *Spec) {
	s.src.reset(it)
	s.hasDS = spec.Downsample != nil
	if s.hasDS {
		s.ds.reset(spec.Downsample, spec.QueryStart, spec.QueryEnd, spec.Start, spec.End)
	}
	s.rate = spec.Rate
	s.err = nil
}

// seek positions the pipeline at t (SeekableView.seek); a rate restarts
// from (0, 0).
func (s *stream) seek(t int64, opts RateOptions) {
	if s.hasDS {
		s.ds.seek(&s.src, t)
	} else {
		s.src.seek(t)
	}
	if s.rate {
		s.rt.reset(opts)
	}
}

// hasData reports whether the series has a raw point at or before end
// after seek. Only a filling downsampler needs the check: it would emit
// fill values for an empty series.
func (s *stream) hasData(end int64) bool {
	if !s.hasDS || !s.ds.fill {
		return true
	}
	s.ds.initialize(&s.src)
	if !s.ds.has {
		s.err = s.src.err()
	}
	return s.ds.has && s.ds.nxt.t <= end
}

// pre returns the next point before the rate.
func (s *stream) pre() (point, bool) {
	if s.hasDS {
		return s.ds.next(&s.src)
	}
	return s.src.next()
}

// next returns the next point of the pipeline, or false at its end or on
// an error (kept in s.err).
func (s *stream) next() (point, bool) {
	for {
		p, ok := s.pre()
		if !ok {
			s.err = s.src.err()
			return point{}, false
		}
		if !s.rate {
			return p, true
		}
		r, keep, err := s.rt.step(p)
		if err != nil {
			s.err = err
			return point{}, false
		}
		if keep {
			return r, true
		}
	}
}

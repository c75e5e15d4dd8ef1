package promql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
)

// Prometheus's own names (--enable-feature) of the PromQL features tsd can
// turn on; each is off by default, as in Prometheus.
const (
	// FeatureDelayedNameRemoval keeps __name__ until the last step of an
	// evaluation, so max by (__name__) (max_over_time({__name__=~"a|b"}[1m]))
	// groups by metric instead of failing with "vector cannot contain
	// metrics with the same labelset".
	FeatureDelayedNameRemoval = "promql-delayed-name-removal"
	// FeatureExperimentalFunctions allows the functions Prometheus marks
	// experimental (sort_by_label, limitk, double_exponential_smoothing...).
	FeatureExperimentalFunctions = "promql-experimental-functions"
	// FeatureDurationExpr allows arithmetic in durations (x[5m*2]).
	FeatureDurationExpr = "promql-duration-expr"
	// FeatureExtendedRangeSelectors allows the anchored and smoothed
	// range selector modifiers.
	FeatureExtendedRangeSelectors = "promql-extended-range-selectors"
	// FeatureBinopFillModifiers allows fill, fill_left and fill_right on
	// binary operators.
	FeatureBinopFillModifiers = "promql-binop-fill-modifiers"
)

// Features are the PromQL features turned on. The zero value is
// Prometheus's default: all off.
type Features struct {
	DelayedNameRemoval     bool
	ExperimentalFunctions  bool
	DurationExpr           bool
	ExtendedRangeSelectors bool
	BinopFillModifiers     bool
}

// featureFlag is one feature's name and field.
type featureFlag struct {
	name string
	on   *bool
}

// flags maps each name to its field of f.
func (f *Features) flags() []featureFlag {
	return []featureFlag{
		{FeatureDelayedNameRemoval, &f.DelayedNameRemoval},
		{FeatureExperimentalFunctions, &f.ExperimentalFunctions},
		{FeatureDurationExpr, &f.DurationExpr},
		{FeatureExtendedRangeSelectors, &f.ExtendedRangeSelectors},
		{FeatureBinopFillModifiers, &f.BinopFillModifiers},
	}
}

// ParseFeatures reads a comma list of feature names; blanks around names
// and empty items are ignored. An unknown name is an error naming it and
// the known ones.
func ParseFeatures(list string) (Features, error) {
	var f Features
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(f.flags(), func(fl featureFlag) bool { return fl.name == name })
		if i < 0 {
			return Features{}, fmt.Errorf("unknown PromQL feature %q (known: %s)", name, strings.Join(KnownFeatures(), ", "))
		}
		*f.flags()[i].on = true
	}
	return f, nil
}

// KnownFeatures lists the names ParseFeatures accepts.
func KnownFeatures() []string {
	var f Features
	var names []string
	for _, fl := range f.flags() {
		names = append(names, fl.name)
	}
	return names
}

// String is the comma list of the features on, in KnownFeatures' order.
func (f Features) String() string {
	var on []string
	for _, fl := range f.flags() {
		if *fl.on {
			on = append(on, fl.name)
		}
	}
	return strings.Join(on, ",")
}

// SetParserFeatures turns the parser's features on or off for the whole
// process: Prometheus's parser keeps them in package variables, read by
// every query parsed anywhere (the engine, the HTTP API's own parsing).
// The daemon calls it once at start-up, before it serves.
func SetParserFeatures(f Features) {
	parser.EnableExperimentalFunctions = f.ExperimentalFunctions
	parser.ExperimentalDurationExpr = f.DurationExpr
	parser.EnableExtendedRangeSelectors = f.ExtendedRangeSelectors
	parser.EnableBinopFillModifiers = f.BinopFillModifiers
}

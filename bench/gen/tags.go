package gen

import (
	"math/rand/v2"
	"strconv"
)

// TagKeys are the ten tag keys of every host, in the order the writers emit
// them.
var TagKeys = [10]string{
	"hostname", "region", "datacenter", "rack", "os", "arch",
	"team", "service", "service_version", "service_environment",
}

// tagStream separates the tag streams from the value streams.
const tagStream = 0x7461677300000000 // "tags"

var (
	regions = []string{
		"us-east-1", "us-west-1", "us-west-2", "eu-west-1", "eu-central-1",
		"ap-southeast-1", "ap-southeast-2", "ap-northeast-1", "sa-east-1",
	}
	zones        = []string{"a", "b", "c"}
	oses         = []string{"Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"}
	arches       = []string{"x64", "x86"}
	teams        = []string{"SF", "NYC", "LON", "CHI"}
	environments = []string{"production", "staging", "test"}
)

// Host is one host's tag values, in TagKeys order.
type Host struct {
	// Tags holds the values of TagKeys.
	Tags [10]string
}

// newHost derives host i's tags from the seed.
func newHost(seed uint64, i int) Host {
	r := rand.New(rand.NewPCG(seed^tagStream, uint64(i)))
	region := regions[r.IntN(len(regions))]
	return Host{Tags: [10]string{
		"host_" + strconv.Itoa(i),
		region,
		region + zones[r.IntN(len(zones))],
		strconv.Itoa(r.IntN(100)),
		oses[r.IntN(len(oses))],
		arches[r.IntN(len(arches))],
		teams[r.IntN(len(teams))],
		strconv.Itoa(r.IntN(20)),
		strconv.Itoa(r.IntN(2)),
		environments[r.IntN(len(environments))],
	}}
}

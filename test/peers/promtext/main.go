// Command promtext parses a Prometheus text exposition (format 0.0.4) with
// Prometheus' own parser, github.com/prometheus/common/expfmt's TextParser
// (what client_golang's tests and promtool read the format with), and prints
// what it got as JSON, so tests can check svc's GET /metrics as Prometheus
// reads it: families, their types and help, every series' labels and values.
//
// Input on stdin: the exposition. Output on stdout: a JSON array of families
// sorted by name, each {"name", "help", "type", "metrics": [...]}, a metric
// being {"labels": {...}, "value": N} for counters and gauges, or
// {"labels": {...}, "buckets": [{"le": N, "count": N}], "sum": N, "count": N}
// for histograms (NaN, +Inf and -Inf as those strings). A parse error exits 1 with the
// parser's message on stderr.
//
// Built into test/peers/bin by scripts/peers.sh (module test/peers).
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

type bucket struct {
	Le    any     `json:"le"`
	Count float64 `json:"count"`
}

type metric struct {
	Labels  map[string]string `json:"labels"`
	Value   any               `json:"value,omitempty"`
	Buckets []bucket          `json:"buckets,omitempty"`
	Sum     any               `json:"sum,omitempty"`
	Count   any               `json:"count,omitempty"`
}

type family struct {
	Name    string   `json:"name"`
	Help    string   `json:"help"`
	Type    string   `json:"type"`
	Metrics []metric `json:"metrics"`
}

// number is v for JSON, which has no NaN or infinities: those as the strings "NaN", "+Inf", "-Inf".
func number(v float64) any {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return v
}

func main() {
	// Legacy names ([a-zA-Z_:][a-zA-Z0-9_:]*), what format 0.0.4 allows unquoted and
	// what every Prometheus reads; prometheus/common 0.66+ needs the scheme named.
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := []family{}
	for _, mf := range families {
		f := family{Name: mf.GetName(), Help: mf.GetHelp(), Type: mf.GetType().String(), Metrics: []metric{}}
		for _, m := range mf.Metric {
			labels := map[string]string{}
			for _, pair := range m.Label {
				labels[pair.GetName()] = pair.GetValue()
			}
			entry := metric{Labels: labels}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				entry.Value = number(m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				entry.Value = number(m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.Bucket {
					entry.Buckets = append(entry.Buckets, bucket{Le: number(b.GetUpperBound()), Count: float64(b.GetCumulativeCount())})
				}
				entry.Sum, entry.Count = number(h.GetSampleSum()), float64(h.GetSampleCount())
			default:
				entry.Value = number(m.GetUntyped().GetValue())
			}
			f.Metrics = append(f.Metrics, entry)
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Command yamlv3 decodes YAML documents the way the OpenTelemetry Collector
// does and prints what it got, with the Go type of every value, so tests can
// check that rendered otelcol YAML means what svc intended.
//
// The collector's file and YAML providers call gopkg.in/yaml.v3's
// yaml.Unmarshal(bytes, &rawConf) with `var rawConf any`
// (open-telemetry/opentelemetry-collector confmap/provider/internal/provider.go
// at 4e6693cc597d59304762b27f9388b165b287ce35, NewRetrievedFromYAML; later
// versions keep the call in confmap/provider.go), then decode with
// mapstructure and WeaklyTypedInput false (confmap/internal/decoder.go at
// 0fc4ddfe4e398f279c03ee97c9a5a2a5d4685df3), so a value yaml.v3 resolves as a
// time, an int or a bool never reaches a string field. This program makes
// the same yaml.Unmarshal call.
//
// Input on stdin: a JSON array of YAML documents (strings). Output on stdout:
// a JSON array, one entry per document, either {"value": V} or {"error": "…"},
// where V is {"type": "<Go type>", "value": …}: maps as a list of
// {"key": V, "value": V} sorted by key, lists as a list of V, scalars as
// text (ints, floats, times) or as JSON (strings, bools, null).
//
// Built into test/peers/bin by scripts/peers.sh (module test/peers).
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

type entry struct {
	Key   typed `json:"key"`
	Value typed `json:"value"`
}

type typed struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type result struct {
	Value *typed `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

func describe(v any) typed {
	name := fmt.Sprintf("%T", v)
	switch x := v.(type) {
	case nil:
		return typed{"nil", nil}
	case string, bool:
		return typed{name, x}
	case int:
		return typed{name, strconv.Itoa(x)}
	case int64:
		return typed{name, strconv.FormatInt(x, 10)}
	case uint64:
		return typed{name, strconv.FormatUint(x, 10)}
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return typed{name, fmt.Sprint(x)}
		}
		return typed{name, strconv.FormatFloat(x, 'g', -1, 64)}
	case time.Time:
		return typed{name, x.Format(time.RFC3339Nano)}
	case []byte:
		return typed{name, base64.StdEncoding.EncodeToString(x)}
	case []any:
		items := make([]typed, len(x))
		for i, item := range x {
			items[i] = describe(item)
		}
		return typed{name, items}
	case map[string]any:
		entries := make([]entry, 0, len(x))
		for k, item := range x {
			entries = append(entries, entry{describe(k), describe(item)})
		}
		return typed{name, sorted(entries)}
	case map[any]any:
		entries := make([]entry, 0, len(x))
		for k, item := range x {
			entries = append(entries, entry{describe(k), describe(item)})
		}
		return typed{name, sorted(entries)}
	default:
		return typed{name, fmt.Sprint(x)}
	}
}

func sorted(entries []entry) []entry {
	sort.Slice(entries, func(i, j int) bool {
		return fmt.Sprint(entries[i].Key.Value) < fmt.Sprint(entries[j].Key.Value)
	})
	return entries
}

func main() {
	var docs []string
	if err := json.NewDecoder(os.Stdin).Decode(&docs); err != nil {
		fmt.Fprintln(os.Stderr, "yamlv3: stdin must be a JSON array of strings:", err)
		os.Exit(2)
	}
	results := make([]result, len(docs))
	for i, doc := range docs {
		var raw any
		if err := yaml.Unmarshal([]byte(doc), &raw); err != nil {
			results[i] = result{Error: err.Error()}
			continue
		}
		value := describe(raw)
		results[i] = result{Value: &value}
	}
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	if err := out.Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "yamlv3:", err)
		os.Exit(1)
	}
}

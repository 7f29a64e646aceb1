// Reads Alloy configs, one JSON object `{"name": …, "text": …, "values"?: true}`
// a line, and answers each with `{"name": …, "errors": [...]}`: empty when
// Alloy's own syntax module parses the config and evaluates every attribute
// with every reference resolved (alloycheck), else Alloy's diagnostics; with
// `values`, also every attribute's value as Alloy evaluated it, by path
// (`"otelcol.exporter.otlphttp.backend/client/headers": [{…}]`). Built into
// test/peers/bin by scripts/peers.sh (module test/peers/alloy).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"svc/test/peers/alloy/alloycheck"
)

type config struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	Values bool   `json:"values"`
}

type answer struct {
	Name   string           `json:"name"`
	Errors []string         `json:"errors"`
	Values map[string][]any `json:"values,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 16<<20), 16<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c config
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		a := answer{Name: c.Name, Errors: []string{}}
		values, err := alloycheck.Evaluate(c.Name, []byte(c.Text))
		if err != nil {
			a.Errors = alloycheck.Messages(err)
		} else if c.Values {
			a.Values = values
		}
		if err := out.Encode(a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

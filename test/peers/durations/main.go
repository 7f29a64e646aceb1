// Reads JSON-quoted strings, one a line, and prints for each what Go's
// time.ParseDuration and Prometheus' model.ParseDuration make of it:
// nanoseconds, or "null" when it does not parse. Built into test/peers/bin
// by scripts/peers.sh (module test/peers).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/common/model"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var s string
		if err := json.Unmarshal(in.Bytes(), &s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		goNs, promNs := "null", "null"
		if d, err := time.ParseDuration(s); err == nil {
			goNs = fmt.Sprint(int64(d))
		}
		if d, err := model.ParseDuration(s); err == nil {
			promNs = fmt.Sprint(int64(d))
		}
		fmt.Fprintln(out, goNs, promNs)
	}
}

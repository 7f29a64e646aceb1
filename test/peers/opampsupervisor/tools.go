//go:build tools

// Package opampsupervisor pins the OpAMP supervisor's main package in this
// module's go.mod so `go build github.com/open-telemetry/opentelemetry-collector-contrib/cmd/opampsupervisor`
// builds it at the version go.sum holds. A go.mod `tool` line would do the
// same but makes `go mod tidy` fetch the supervisor's own test dependencies
// (its testbed), which the module proxy refuses.
package opampsupervisor

import _ "github.com/open-telemetry/opentelemetry-collector-contrib/cmd/opampsupervisor"

// Package alloycheck does to an Alloy config what Alloy's loader does before
// any component runs, as far as Alloy's own syntax module reaches without
// Alloy's component registry (which lives in grafana/alloy's root module, not
// buildable from the module proxy: README "Tests"). Read from grafana/alloy
// v1.18.1, internal/runtime/internal/controller (loader.go, component_references.go)
// and internal/util/ast/references.go:
//   - the file is parsed (syntax/parser);
//   - each top-level block is a node named `name.label` (or `name`), declared once
//     ("block %s already declared at %s");
//   - every reference in a block resolves to a declared node, or its first name is
//     Alloy's standard library ("component %q does not exist or is out of scope");
//   - every attribute is evaluated (syntax/vm), with each component's referenced
//     exports standing in for what the running component would export.
package alloycheck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/grafana/alloy/syntax/ast"
	"github.com/grafana/alloy/syntax/diag"
	"github.com/grafana/alloy/syntax/parser"
	"github.com/grafana/alloy/syntax/vm"
)

// Check answers nil when src passes, else diag.Diagnostics in Alloy's words.
func Check(filename string, src []byte) error {
	_, err := Evaluate(filename, src)
	return err
}

// Evaluate checks src as Check does and answers every attribute's value by
// its path: the top-level block's id, each nested block's name, the attribute's
// name, joined by "/" (a repeated block's attributes come in order under one path).
func Evaluate(filename string, src []byte) (map[string][]any, error) {
	file, err := parser.ParseFile(filename, src)
	if err != nil {
		return nil, err
	}
	var diags diag.Diagnostics
	nodes := map[string]*ast.BlockStmt{}
	for _, stmt := range file.Body {
		block, ok := stmt.(*ast.BlockStmt)
		if !ok {
			continue
		}
		id := blockID(block)
		if first, seen := nodes[id]; seen {
			diags.Add(errorAt(block, fmt.Sprintf("block %s already declared at %s", id, ast.StartPos(first).Position())))
			continue
		}
		nodes[id] = block
	}

	// The scope: each referenced export of a declared component, nested by name as Alloy's loader scopes them.
	exports := map[string]any{}
	scope := vm.NewScope(exports)
	stdlibOnly := vm.NewScope(nil)
	for _, block := range nodes {
		for _, t := range traversals(block.Body) {
			resolved := false
			for n := 1; n <= len(t); n++ {
				if nodes[join(t[:n])] == nil {
					continue
				}
				resolved = true
				if n < len(t) {
					put(exports, t[:n+1])
				}
				break
			}
			if resolved {
				continue
			}
			if _, stdlib := stdlibOnly.Lookup(t[0].Name); !stdlib {
				diags.Add(diag.Diagnostic{
					Severity: diag.SeverityLevelError,
					Message:  fmt.Sprintf("component %q does not exist or is out of scope", join(t)),
					StartPos: ast.StartPos(t[0]).Position(),
					EndPos:   ast.EndPos(t[len(t)-1]).Position(),
				})
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	values := map[string][]any{}
	for _, stmt := range file.Body {
		path := ""
		if block, ok := stmt.(*ast.BlockStmt); ok {
			path = blockID(block)
			for _, inner := range block.Body {
				evaluate(inner, path, scope, values, &diags)
			}
			continue
		}
		evaluate(stmt, path, scope, values, &diags)
	}
	return values, diags.ErrorOrNil()
}

// Messages lists each diagnostic of err as `file:line:col: message`.
func Messages(err error) []string {
	var diags diag.Diagnostics
	if !errors.As(err, &diags) {
		return []string{err.Error()}
	}
	messages := make([]string, len(diags))
	for i, d := range diags {
		messages[i] = d.Error()
	}
	return messages
}

// evaluate runs every attribute under stmt (at path) through the syntax module's evaluator.
func evaluate(stmt ast.Stmt, path string, scope *vm.Scope, values map[string][]any, diags *diag.Diagnostics) {
	switch s := stmt.(type) {
	case *ast.AttributeStmt:
		var value any
		if err := vm.New(s.Value).Evaluate(scope, &value); err != nil {
			var evaluated diag.Diagnostics
			if errors.As(err, &evaluated) {
				diags.Merge(evaluated)
			} else {
				diags.Add(errorAt(s, err.Error()))
			}
			return
		}
		key := strings.TrimPrefix(path+"/"+s.Name.Name, "/")
		values[key] = append(values[key], value)
	case *ast.BlockStmt:
		for _, inner := range s.Body {
			evaluate(inner, strings.TrimPrefix(path+"/"+blockID(s), "/"), scope, values, diags)
		}
	}
}

func blockID(block *ast.BlockStmt) string {
	id := strings.Join(block.Name, ".")
	if block.Label != "" {
		id += "." + block.Label
	}
	return id
}

func errorAt(node ast.Node, message string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.SeverityLevelError, Message: message, StartPos: ast.StartPos(node).Position(), EndPos: ast.EndPos(node).Position()}
}

// put makes path (a component's id and one export) exist in the nested scope, the export standing for its value.
func put(scope map[string]any, path []*ast.Ident) {
	for i, ident := range path {
		if i == len(path)-1 {
			if _, ok := scope[ident.Name]; !ok {
				scope[ident.Name] = join(path)
			}
			return
		}
		next, ok := scope[ident.Name].(map[string]any)
		if !ok {
			next = map[string]any{}
			scope[ident.Name] = next
		}
		scope = next
	}
}

func join(t []*ast.Ident) string {
	names := make([]string, len(t))
	for i, ident := range t {
		names[i] = ident.Name
	}
	return strings.Join(names, ".")
}

// traversals finds every uninterrupted chain of names (`a.b.c`) in body, as
// internal/util/ast.TraversalsFromBody does: an index or a call ends a chain.
func traversals(body ast.Body) [][]*ast.Ident {
	w := &walker{}
	ast.Walk(w, body)
	w.flush()
	return w.found
}

type walker struct {
	found    [][]*ast.Ident
	building bool
	current  []*ast.Ident
}

func (w *walker) Visit(node ast.Node) ast.Visitor {
	switch n := node.(type) {
	case *ast.IdentifierExpr:
		w.flush()
		w.building = true
		w.current = append(w.current, n.Ident)
	case *ast.AccessExpr:
		ast.Walk(w, n.Value)
		if w.building {
			w.current = append(w.current, n.Name)
		}
		return nil
	case *ast.IndexExpr:
		ast.Walk(w, n.Value)
		w.flush()
		ast.Walk(w, n.Index)
		return nil
	case *ast.CallExpr:
		ast.Walk(w, n.Value)
		w.flush()
		for _, arg := range n.Args {
			ast.Walk(w, arg)
		}
		return nil
	}
	return w
}

func (w *walker) flush() {
	if w.building && len(w.current) > 0 {
		w.found = append(w.found, w.current)
	}
	w.building = false
	w.current = nil
}

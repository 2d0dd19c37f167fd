// Call sites of a Go module with the functions go/types resolves them to: the independent
// reference of `ctxfast eval fidelity` for Go.
//
// usage: go run go_calls.go ROOT   (one JSON object per line on stdout)
//
// Every package directory of the module at ROOT (files matching linux/amd64 build
// constraints, tests excluded) is type-checked from source. Packages of the module are
// imported from source too; the standard library from source; other modules (not
// downloadable here) become empty packages, so calls into them have no target. Type errors
// are ignored: go/types still records every use it can resolve.
package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type target struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Callable bool   `json:"callable"`
}

type site struct {
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Col     int      `json:"col"`
	Name    string   `json:"name"`
	Targets []target `json:"targets"`
	// Resolved: go/types knew the callee (in the tree or not); unresolved sites score nothing.
	Resolved bool `json:"resolved"`
}

var (
	root    string
	module  string
	fset    = token.NewFileSet()
	std     types.Importer
	loaded  = map[string]*types.Package{}
	parsed  = map[string][]*ast.File{}
	infos   = map[string]*types.Info{}
	pending = map[string]bool{}
)

func modulePath() string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" {
			return f[1]
		}
	}
	return ""
}

type imp struct{}

func (imp) Import(path string) (*types.Package, error) {
	if module != "" && (path == module || strings.HasPrefix(path, module+"/")) {
		dir := filepath.Join(root, strings.TrimPrefix(strings.TrimPrefix(path, module), "/"))
		return check(dir, path), nil
	}
	if p, err := std.Import(path); err == nil {
		return p, nil
	}
	p := types.NewPackage(path, filepath.Base(path))
	p.MarkComplete()
	return p, nil
}

func check(dir, path string) *types.Package {
	if p, ok := loaded[dir]; ok {
		return p
	}
	if pending[dir] { // an import cycle: give the cycle an empty package
		p := types.NewPackage(path, filepath.Base(dir))
		p.MarkComplete()
		return p
	}
	pending[dir] = true
	entries, _ := os.ReadDir(dir)
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if f != nil && err == nil {
			files = append(files, f)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp{}, Error: func(error) {}}
	pkg, _ := conf.Check(path, fset, files, info)
	if pkg == nil {
		pkg = types.NewPackage(path, filepath.Base(dir))
	}
	loaded[dir], parsed[dir], infos[dir] = pkg, files, info
	delete(pending, dir)
	return pkg
}

func rel(p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil || strings.HasPrefix(r, "..") {
		return ""
	}
	return filepath.ToSlash(r)
}

func main() {
	root, _ = filepath.Abs(os.Args[1])
	module = modulePath()
	std = importer.ForCompiler(fset, "source", nil)
	var dirs []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			n := d.Name()
			if p != root && (strings.HasPrefix(n, ".") || n == "vendor" || n == "testdata") {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Strings(dirs)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for _, dir := range dirs {
		path := module
		if r := rel(dir); r != "." {
			path = module + "/" + r
		}
		check(dir, path)
		info := infos[dir]
		for _, f := range parsed[dir] {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var id *ast.Ident
				switch fn := call.Fun.(type) {
				case *ast.Ident:
					id = fn
				case *ast.SelectorExpr:
					id = fn.Sel
				}
				if id == nil {
					return true
				}
				pos := fset.Position(id.Pos())
				s := site{File: rel(pos.Filename), Line: pos.Line, Col: pos.Column - 1, Name: id.Name, Targets: []target{}}
				obj := info.Uses[id]
				s.Resolved = obj != nil
				if obj != nil && obj.Pos().IsValid() {
					tp := fset.Position(obj.Pos())
					if r := rel(tp.Filename); r != "" {
						_, isFunc := obj.(*types.Func)
						s.Targets = append(s.Targets, target{File: r, Line: tp.Line, Callable: isFunc})
					}
				}
				enc.Encode(s)
				return true
			})
		}
	}
}

package core

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// coreDefs is core's shipped code read as definitions: which file each
// top-level definition (a type with its fields, a function, a method, a
// variable or constant) is in, and which definitions each one names.
type coreDefs struct {
	fileOf map[string]string // definition -> file
	uses   map[string][]string
}

func readCoreDefs(t *testing.T) coreDefs {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	if _, err := conf.Check("core", fset, files, info); err != nil {
		t.Fatal(err)
	}
	d := coreDefs{fileOf: map[string]string{}, uses: map[string][]string{}}
	defOf := map[types.Object]string{}
	type span struct {
		from, to token.Pos
		def      string
	}
	var spans []span
	define := func(file, def string, id *ast.Ident, node ast.Node) {
		d.fileOf[def] = file
		defOf[info.Defs[id]] = def
		spans = append(spans, span{node.Pos(), node.End(), def})
	}
	for _, f := range files {
		file := fset.Position(f.Pos()).Filename
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				def := decl.Name.Name
				if decl.Recv != nil {
					def = receiverName(decl.Recv.List[0].Type) + "." + def
				}
				define(file, def, decl.Name, decl)
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						define(file, spec.Name.Name, spec.Name, spec)
						// A field or an interface's method is its type's.
						ast.Inspect(spec.Type, func(n ast.Node) bool {
							if field, ok := n.(*ast.Field); ok {
								for _, id := range field.Names {
									defOf[info.Defs[id]] = spec.Name.Name
								}
							}
							return true
						})
					case *ast.ValueSpec:
						for _, id := range spec.Names {
							define(file, id.Name, id, spec)
						}
					}
				}
			}
		}
	}
	for id, obj := range info.Uses {
		used, ok := defOf[obj]
		if !ok {
			continue
		}
		i := slices.IndexFunc(spans, func(s span) bool { return s.from <= id.Pos() && id.Pos() < s.to })
		if i < 0 || spans[i].def == used {
			continue
		}
		user := spans[i].def
		if !slices.Contains(d.uses[user], used) {
			d.uses[user] = append(d.uses[user], used)
		}
	}
	return d
}

func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// engine returns the definitions that reach the Router or a call: the
// router's own and every handler, feature and step built on them.
func (d coreDefs) engine() map[string]bool {
	engine := map[string]bool{"Router": true, "call": true}
	for grew := true; grew; {
		grew = false
		for def, uses := range d.uses {
			if !engine[def] && slices.ContainsFunc(uses, func(u string) bool { return engine[u] }) {
				engine[def], grew = true, true
			}
		}
	}
	return engine
}

// TestVocabularyBelowEngine holds core's two layers apart. What platforms
// and plugins speak (a message, an event, a conversation and the State
// that keeps it, a plugin, a platform, a place, the reply's coordinator)
// is in files that hold nothing of the engine (the Router, a call, the
// handlers and features over them), and none of those files names a
// definition in a file of the engine's: a file that mixed the two made
// core's files one circle, in which every file reached every other.
func TestVocabularyBelowEngine(t *testing.T) {
	d := readCoreDefs(t)
	engine := d.engine()
	engineFile := map[string]bool{}
	for def, file := range d.fileOf {
		if engine[def] {
			engineFile[file] = true
		}
	}
	var wrong []string
	for def, uses := range d.uses {
		if engineFile[d.fileOf[def]] {
			continue
		}
		for _, used := range uses {
			if engineFile[d.fileOf[used]] {
				wrong = append(wrong, d.fileOf[def]+": "+def+" names "+used+", in the engine's "+d.fileOf[used])
			}
		}
	}
	sort.Strings(wrong)
	if len(wrong) > 0 {
		t.Errorf("vocabulary that reaches up into the engine's files (move the definition to the layer it belongs to):\n%s", strings.Join(wrong, "\n"))
	}
	if len(engineFile) == 0 || len(engineFile) == len(d.filesRead()) {
		t.Fatalf("%d of %d files are the engine's: the reading is wrong", len(engineFile), len(d.filesRead()))
	}
}

func (d coreDefs) filesRead() map[string]bool {
	files := map[string]bool{}
	for _, file := range d.fileOf {
		files[file] = true
	}
	return files
}

// TestReadCoreDefs checks the reading the layer test stands on against
// definitions whose places and uses are known.
func TestReadCoreDefs(t *testing.T) {
	d := readCoreDefs(t)
	engine := d.engine()
	for _, tc := range []struct {
		def, file string
		engine    bool
	}{
		{"Router", "router.go", true},
		{"Router.handle", "router.go", true},
		{"cmdStatus", "convcmd.go", true},
		{"Message", "message.go", false},
		{"State", "conversations.go", false},
		{"Plugin", "plugin.go", false},
	} {
		if got := d.fileOf[tc.def]; got != tc.file {
			t.Errorf("%s is in %q, want %s", tc.def, got, tc.file)
		}
		if engine[tc.def] != tc.engine {
			t.Errorf("%s is the engine's: %v, want %v", tc.def, engine[tc.def], tc.engine)
		}
	}
	if !slices.Contains(d.uses["Router.handle"], "Router.route") {
		t.Errorf("Router.handle uses %v, want Router.route among them", d.uses["Router.handle"])
	}
}

package core_test

import (
	"go/build"
	"path"
	"strings"
	"testing"
)

// core is the domain: it, and the packages of ours it uses, import only
// the standard library and x/time/rate. A library core needs (a cron
// parser) is injected by bot.
func TestCoreImportsOnlyTheStandardLibrary(t *testing.T) {
	t.Parallel()
	const module = "github.com/jake-bot/jake-bot/"
	seen := map[string]bool{}
	var visit func(dir, importPath string)
	visit = func(dir, importPath string) {
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("read %s: %v", importPath, err)
		}
		for _, imp := range pkg.Imports {
			switch {
			case seen[imp]:
			case strings.HasPrefix(imp, module):
				seen[imp] = true
				visit(path.Join("..", strings.TrimPrefix(imp, module)), imp)
			case imp == "golang.org/x/time/rate" || !strings.Contains(strings.Split(imp, "/")[0], "."):
			default:
				t.Errorf("%s imports %s: core imports only the standard library and golang.org/x/time/rate", importPath, imp)
			}
		}
	}
	visit(".", module+"core")
}

package gitrepo

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// MinVersion is the oldest git this package works with: /merge checks
// for conflicts with merge-tree --write-tree, new in 2.38.
var MinVersion = [2]int{2, 38}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)`)

// CheckGit returns what `git --version` says, or an error when git is not
// on PATH or is older than MinVersion.
func CheckGit(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("git --version: %w", err)
	}
	text := strings.TrimSpace(string(out))
	if !atLeast(text, MinVersion) {
		return text, fmt.Errorf("%s is older than %d.%d", text, MinVersion[0], MinVersion[1])
	}
	return text, nil
}

// atLeast reports whether the first major.minor in text is min or later.
func atLeast(text string, min [2]int) bool {
	m := versionRE.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major > min[0] || major == min[0] && minor >= min[1]
}

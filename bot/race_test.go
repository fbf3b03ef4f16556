//go:build race

package bot_test

import "strconv"

const raceEnabled = true

func itoa(n int) string { return strconv.Itoa(n) }

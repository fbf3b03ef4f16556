//go:build !race

package bot_test

import "strconv"

const raceEnabled = false

func itoa(n int) string { return strconv.Itoa(n) }

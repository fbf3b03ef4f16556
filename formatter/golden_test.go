package formatter

import "flag"

// update rewrites golden files instead of comparing with them.
var update = flag.Bool("update", false, "rewrite golden files")

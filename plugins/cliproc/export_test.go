package cliproc

// EndOutput ends p's output reads now, as outputGrace after its exit does.
func EndOutput(p *Process) { p.streams.end() }

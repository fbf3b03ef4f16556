package core

import ()

// cmdFile answers /file <path>: the file from the conversation's
// workdir, here or on its runner, as a document.
func cmdFile(c *call) (string, error) {
	fl, ctx, m, conv, arg := &c.r.files, c.ctx, c.m, c.conv, c.cmd.Arg
	fs, ok := c.a.p.(FileSender)
	if !ok {
		return fl.fileWithoutSending(ctx, m, conv, arg, "")
	}
	return "", fl.sendWorkFile(ctx, fs, m, conv, arg, "")
}

package core

import (
	"context"
)

// call is one message as the router handles it, built once by handle
// (newCall) once the message is admitted: the message and its origin
// (Message.Origin), the platform it came from, its author's rights and
// the conversation it was written in, if any. A command is a function
// over it (CommandSpec.Run), so that no handler looks the conversation up
// again or asks again whether its author is an admin.
type call struct {
	ctx context.Context
	r   *Router
	a   *attached
	// m is the message; a /start that opens a thread moves it there.
	m  Message
	id string
	// who are the rights of m's author; may is what m may do, decided
	// once (Router.permitsOf).
	who Rights
	may permits
	// conv is m's conversation as it was when m arrived; hasConv says
	// whether there was one.
	conv    Conversation
	hasConv bool
	// cmd is the command m is, and usage its entry's usage line, for a
	// handler that finds its argument wanting.
	cmd   Command
	usage string
	// done is m's Done; an answer keeps it (tookDone) until its turn
	// ends.
	done     func()
	tookDone bool
}

// newCall builds m's call, deciding what m may do (permitsOf).
func (r *Router) newCall(ctx context.Context, a *attached, m Message, id string, done func()) *call {
	may := r.permitsOf(m)
	c := &call{ctx: ctx, r: r, a: a, m: m, id: id, done: done, who: Rights{Admin: may.admin}, may: may}
	c.conv, c.hasConv = r.convs.Get(m.Key)
	return c
}

// place is the machine c's conversation works on, narrowed to c's author.
func (c *call) place() Place { return c.r.placeOf(c.conv, c.who) }

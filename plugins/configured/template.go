package configured

import (
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	placeholders  = []string{PhMessage, PhWorkdir, PhResume}
)

// args reads the argument template. Placeholders must be whole entries:
// no shell ever reads the arguments, so "--prompt={message}" or
// "'{message}'" would only be a mistake.
func (l *loader) args(n *yaml.Node, s *Spec) []Arg {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, "args: want a list, one entry per argument")
		return nil
	}
	var out []Arg
	count := map[string]int{}
	for _, c := range n.Content {
		switch c.Kind {
		case yaml.ScalarNode:
			a := l.arg(c)
			if a.Placeholder == PhResume {
				l.errorf(c, `{resume} must be in an optional group such as [--resume, "{resume}"], so that it is left out while there is no session`)
			}
			count[a.Placeholder]++
			out = append(out, a)
		case yaml.SequenceNode:
			g := Arg{Group: []Arg{}}
			for _, gc := range c.Content {
				if gc.Kind != yaml.ScalarNode {
					l.errorf(gc, "args: an optional group holds plain arguments only")
					continue
				}
				a := l.arg(gc)
				if a.Placeholder == PhMessage {
					l.errorf(gc, "{message} must not be in an optional group: every turn has a message")
				}
				count[a.Placeholder]++
				g.Group = append(g.Group, a)
			}
			if !slices.ContainsFunc(g.Group, func(a Arg) bool { return a.Placeholder != "" }) {
				l.errorf(c, "args: an optional group needs a placeholder that decides whether it is used")
			}
			out = append(out, g)
		default:
			l.errorf(c, "args: want an argument or an optional group [..]")
		}
	}
	if count[PhMessage] != 1 {
		l.errorf(n, "args: want {message} exactly once, as an entry of its own (found %d)", count[PhMessage])
	}
	switch {
	case count[PhResume] > 0 && !s.KeepsSessions() && s.Mode != "":
		l.errorf(n, "args use {resume} but nothing finds the session id: add jsonl.session (mode jsonl) or resume: '<regex>' (plain, pty)")
	case count[PhResume] == 0 && s.KeepsSessions():
		l.errorf(n, `the session id is found but args have no {resume}: add an optional group such as [--resume, "{resume}"]`)
	}
	return out
}

func (l *loader) arg(n *yaml.Node) Arg {
	if n.ShortTag() == "!!null" {
		l.errorf(n, "args: empty argument (quote it as \"\" if you mean an empty string)")
		return Arg{}
	}
	v := n.Value
	m := placeholderRE.FindAllStringSubmatch(v, -1)
	if len(m) == 0 {
		return Arg{Literal: v}
	}
	for _, sub := range m {
		if !slices.Contains(placeholders, sub[1]) {
			l.errorf(n, "args: unknown placeholder {%s} in %q (known: {message}, {workdir}, {resume})", sub[1], v)
			return Arg{}
		}
	}
	if len(m) == 1 && m[0][0] == v {
		return Arg{Placeholder: m[0][1]}
	}
	l.errorf(n, "args: %q puts a placeholder inside a larger or quoted string; make %s an entry of its own (each placeholder is exactly one argument, never passed through a shell, so it needs no quotes)",
		v, m[0][0])
	return Arg{}
}

// mapping reads a jsonl mapping.
func (l *loader) mapping(n *yaml.Node) Mapping {
	var m Mapping
	for key, v := range l.fields(n, "jsonl", "text", "session", "error") {
		rules := l.rules(v, "jsonl."+key)
		switch key {
		case "text":
			m.Text = rules
		case "session":
			m.Session = rules
		case "error":
			m.Error = rules
		}
	}
	if len(m.Text) == 0 && n.Kind == yaml.MappingNode {
		l.errorf(n, "jsonl: needs text: the field that carries the answer, such as part.text")
	}
	return m
}

// rules reads a path, a rule mapping, or a list of either.
func (l *loader) rules(n *yaml.Node, what string) []Rule {
	switch n.Kind {
	case yaml.SequenceNode:
		var out []Rule
		for _, c := range n.Content {
			out = append(out, l.rules(c, what)...)
		}
		return out
	case yaml.ScalarNode:
		return []Rule{{Path: l.path(n, what)}}
	}
	r := Rule{}
	for key, v := range l.fields(n, what, "path", "when", "paragraph") {
		switch key {
		case "path":
			r.Path = l.path(v, what+".path")
		case "when":
			for ck, cv := range l.fields(v, what+".when", l.keys(v)...) {
				r.When = append(r.When, Cond{Path: l.path(&yaml.Node{Kind: yaml.ScalarNode, Value: ck, Line: v.Line}, what+".when"), Value: condValue(cv)})
				if cv.Kind != yaml.ScalarNode {
					l.errorf(cv, "%s.when.%s: want a single value", what, ck)
				}
			}
		case "paragraph":
			r.Paragraph = l.str(v, what+".paragraph") == "true"
		}
	}
	if r.Path == nil && n.Kind == yaml.MappingNode {
		l.errorf(n, "%s: missing path", what)
	}
	return []Rule{r}
}

func (l *loader) path(n *yaml.Node, what string) Path {
	p := ParsePath(l.str(n, what))
	if p == nil {
		l.errorf(n, "%s %q: want a dotted path such as part.text", what, n.Value)
	}
	return p
}

// condValue writes a YAML scalar as the JSON scalar it stands for.
func condValue(n *yaml.Node) string {
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return strings.ToLower(n.Value)
	}
	return n.Value
}

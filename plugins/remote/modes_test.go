package remote_test

import "testing"

// An admin's bypass mode on a shared conversation on a runner applies to
// the admin's turns only: another user's turn runs there as configured,
// told so, where the runner used to refuse it outright.
func TestBypassModeOnARunnerIsItsAuthorsOnly(t *testing.T) {
	t.Parallel()
	w, box2 := newWorldWithBox2(t)
	w.startOn(box2)
	w.say("/mode yolo")
	w.expect("From the next turn: yolo", "admins' turns only")
	w.sayAs(key(admin), user, "hello")
	w.expect("box2 echo: hello", "set to mode yolo", "only admins may use it")
	if turn := recv(t, box2.plugin.Started(), "a user's turn on box2"); turn.Mode != "" {
		t.Errorf("a user's turn ran in mode %q, want the configured one", turn.Mode)
	}
	w.say("again")
	w.expect("box2 echo: again")
	if turn := recv(t, box2.plugin.Started(), "the admin's turn on box2"); turn.Mode != "yolo" {
		t.Errorf("the admin's turn ran in mode %q, want yolo", turn.Mode)
	}
}

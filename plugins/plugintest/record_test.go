package plugintest

import "testing"

func TestFirstField(t *testing.T) {
	t.Parallel()
	out := []byte("not json\n" + `{"type":"init","session_id":7}` + "\n" +
		`{"type":"thread.started","thread_id":"t1"}` + "\n" + `{"type":"thread.started","thread_id":"t2"}` + "\n")
	for _, tc := range []struct{ typ, field, want string }{
		{"thread.started", "thread_id", "t1"},
		{"init", "session_id", ""}, // not a string
		{"result", "session_id", ""},
	} {
		if got := firstField(out, tc.typ, tc.field); got != tc.want {
			t.Errorf("firstField(%q, %q) = %q, want %q", tc.typ, tc.field, got, tc.want)
		}
	}
}

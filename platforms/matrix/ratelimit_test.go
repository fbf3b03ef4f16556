package matrix

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"maunium.net/go/mautrix"

	"github.com/jake-bot/jake-bot/core"
	"github.com/jake-bot/jake-bot/core/coretest"
)

// A 429 waits the homeserver's retry_after_ms, else its Retry-After, else
// a second, and holds the adapter's own writes as long; any other error
// passes as it is.
func TestRateLimitErrors(t *testing.T) {
	t.Parallel()
	limited := func(body map[string]any, header string) error {
		resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
		if header != "" {
			resp.Header.Set("Retry-After", header)
		}
		e := mautrix.HTTPError{Response: resp}
		if body != nil {
			e.RespError = &mautrix.RespError{ErrCode: "M_LIMIT_EXCEEDED", ExtraData: body, StatusCode: 429}
		}
		return e
	}
	for _, tc := range []struct {
		name string
		err  error
		want time.Duration // 0: not a rate limit
	}{
		{"retry_after_ms", limited(map[string]any{"errcode": "M_LIMIT_EXCEEDED", "retry_after_ms": float64(1500)}, "9"), 1500 * time.Millisecond},
		{"Retry-After only", limited(map[string]any{"errcode": "M_LIMIT_EXCEEDED"}, "3"), 3 * time.Second},
		{"no body", limited(nil, "2"), 2 * time.Second},
		{"neither", limited(map[string]any{"errcode": "M_LIMIT_EXCEEDED"}, ""), time.Second},
		{"forbidden", mautrix.HTTPError{Response: &http.Response{StatusCode: http.StatusForbidden}}, 0},
		{"network", errors.New("connection refused"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := coretest.NewManualClock()
			a := &Adapter{gate: &gate{clock: clock}}
			err := a.apiError(tc.err)
			rl, ok := core.AsRateLimit(err)
			if tc.want == 0 {
				if ok || err != tc.err {
					t.Errorf("apiError(%v) = %v, want it as it is", tc.err, err)
				}
				return
			}
			if !ok || rl.RetryAfter != tc.want {
				t.Fatalf("apiError(%v) = %v, want a RateLimitError after %v", tc.err, err, tc.want)
			}
			if d := a.gate.blocked(); d != tc.want {
				t.Errorf("the gate holds writes %v, want %v", d, tc.want)
			}
		})
	}
}

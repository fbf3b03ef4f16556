package doctor

import (
	"context"
	"net/http"
	"testing"

	"github.com/jake-bot/jake-bot/platforms/matrix/matrixtest"
)

// The Matrix check, offline and against a real Dendrite: the token
// accepted as the bot's, another account's token, a refused one.
func TestCheckMatrix(t *testing.T) {
	t.Parallel()
	offline := Options{}.withDefaults()
	var r Report
	checkMatrix(context.Background(), &r, matrixSettings{Homeserver: "matrix.example.org", UserID: "jakebot", Token: "a token", Users: []string{"alice"}}, offline)
	has(t, r, "matrix homeserver", Fail, "MATRIX_HOMESERVER")
	has(t, r, "matrix user", Fail, "MATRIX_USER_ID")
	has(t, r, "matrix allow-list", Fail, "alice")
	noSecret(t, r, "a token")

	srv := matrixtest.Start(t)
	bot, other := srv.Register(t, "jakebot"), srv.Register(t, "someone")
	online := Options{Online: true, HTTP: http.DefaultClient}.withDefaults()
	for _, tc := range []struct {
		name, token string
		status      Status
		detail      string
	}{
		{"the bot's token", bot.Token, OK, "accepted: " + bot.ID.String()},
		{"another account's", other.Token, Fail, "is " + other.ID.String() + "'s"},
		{"refused", "not-a-token", Fail, "401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Report
			checkMatrix(context.Background(), &r, matrixSettings{Homeserver: srv.URL, UserID: bot.ID.String(), Token: tc.token, Users: []string{"@alice:localhost"}}, online)
			has(t, r, "matrix whoami", tc.status, tc.detail)
			noSecret(t, r, tc.token)
		})
	}
}

// Package discordtest provides a fake Discord for tests, as
// net/http/httptest does for net/http: a REST API and a gateway websocket
// speaking Discord's wire protocol to the real discordgo client, which
// record every call, hold the messages users would see, dispatch the
// events a test makes users send, and can fail the way Discord does.
package discordtest

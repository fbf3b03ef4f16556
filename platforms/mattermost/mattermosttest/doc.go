// Package mattermosttest is a fake Mattermost server for the adapter's
// tests: the REST API v4 calls the adapter makes and the WebSocket event
// stream, as the server speaks them, enforcing the rules the adapter
// relies on (the bearer token, the post size, who may edit or react, ids
// of the right form, the rate limit with its headers and 429s), and the
// interactive message buttons' callbacks, posted to the bot as the server
// does when a user presses one.
package mattermosttest

// Package slacktest provides a fake Slack for tests, as net/http/httptest
// does for net/http: the Web API and Socket Mode speaking Slack's wire
// protocol to the real slack-go client, which record every call, hold the
// messages users would see, deliver the events a test makes users send,
// and can fail the way Slack does.
package slacktest

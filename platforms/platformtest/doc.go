// Package platformtest provides fake chat platforms for tests: a
// recording core.Platform, and fake servers that speak each real
// platform's wire protocol to its real client library (the Telegram Bot
// API in telegram.go). The fakes record every call and can be told to
// fail the way the real service does.
package platformtest

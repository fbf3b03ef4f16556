// Package platformtest provides fake chat platforms for tests: a
// recording core.Platform, and fake servers that speak each real
// platform's wire protocol to its real client library.
package platformtest

// Package platformtest helps test chat platform adapters offline: fakes
// that speak each service's real wire protocols to the real client
// libraries over 127.0.0.1, record every call, and let a test wait on
// them instead of sleeping.
package platformtest

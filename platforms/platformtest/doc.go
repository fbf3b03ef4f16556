// Package platformtest provides fakes of the chat services jake-bot's
// platform adapters talk to. Each fake is an httptest server speaking the
// service's real wire protocol, so an adapter's tests run the real client
// library against it; the fakes record every call and can be told to fail
// the way the real service does.
package platformtest

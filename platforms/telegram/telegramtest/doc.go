// Package telegramtest provides a fake Telegram Bot API server for tests,
// as net/http/httptest does for net/http: it speaks the real HTTP API
// (long polling or webhook updates, form-encoded methods, HTML parse
// mode) to the real client library, records every call, holds the
// messages users would see, and can fail the way Telegram does (flood
// control, refused HTML, unknown messages, server errors, requests that
// time out).
package telegramtest

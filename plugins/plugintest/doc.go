// Package plugintest helps test plugins against the real coding CLIs
// offline: it finds the pinned CLIs, fakes the model APIs they call, gives
// each test a private HOME, and checks that no process a test started is
// left running.
package plugintest

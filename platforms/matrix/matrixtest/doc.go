// Package matrixtest starts a real Matrix homeserver for tests: Dendrite
// (github.com/matrix-org/dendrite, Apache-2.0), on loopback, with SQLite,
// no federation and registration by shared secret only, and registers
// users on it. The binary is JAKEBOT_DENDRITE, else dendrite on PATH
// (.ci/run builds v0.13.8); without one the tests that need it skip,
// unless JAKEBOT_REQUIRE_MATRIX=1, as in CI, where they fail.
package matrixtest

// Package jsonrpc reads and writes the JSON-RPC messages that Codex's
// app-server and Gemini CLI's Agent Client Protocol exchange with the bot
// over the CLI's stdin and stdout, one message a line.
package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// Message is one JSON-RPC message: a request (ID and Method), a
// notification (Method only) or a response (ID, and Result or Error).
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is a response's error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data is what the peer adds; Gemini CLI puts details there.
	Data struct {
		Details string `json:"details"`
	} `json:"data"`
}

// Decode reads one line; ok is false for a line that is not a JSON-RPC
// message (a CLI's log line).
func Decode(line []byte) (m Message, ok bool) {
	if json.Unmarshal(line, &m) != nil || m.Method == "" && len(m.ID) == 0 {
		return Message{}, false
	}
	return m, true
}

// IsRequest reports whether m asks something of the bot.
func (m Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// IsNotification reports whether m tells the bot something.
func (m Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// Answers reports whether m is the response to the bot's request id.
func (m Message) Answers(id int) bool {
	return m.Method == "" && string(m.ID) == strconv.Itoa(id)
}

// Peer writes messages through send, one JSON value a line. V2 adds the
// "jsonrpc":"2.0" member, which Codex's app-server leaves out.
type Peer struct {
	Send func(any) error
	V2   bool
}

// Call sends request method with the bot's id.
func (p Peer) Call(id int, method string, params any) error {
	return p.send(map[string]any{"id": id, "method": method, "params": params})
}

// Notify sends notification method.
func (p Peer) Notify(method string, params any) error {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	return p.send(m)
}

// Reply answers the peer's request id with result.
func (p Peer) Reply(id json.RawMessage, result any) error {
	return p.send(map[string]any{"id": id, "result": result})
}

// Refuse answers the peer's request id, for a method the bot does not
// handle, so that the peer never waits for nothing.
func (p Peer) Refuse(id json.RawMessage, method string) error {
	return p.send(map[string]any{"id": id, "error": map[string]any{"code": -32601, "message": "jakebot does not handle " + method}})
}

func (p Peer) send(m map[string]any) error {
	if p.V2 {
		m["jsonrpc"] = "2.0"
	}
	return p.Send(m)
}

package slacktest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gorilla/websocket"
)

// QueueInteractive queues an interaction payload (the JSON Slack would post) to be sent as a
// Socket Mode "interactive" envelope over the next connection, after Slack's hello.
func (s *Server) QueueInteractive(payload []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queued = append(s.queued, json.RawMessage(payload))
}

// Acks returns the envelope ids the Socket Mode client acknowledged.
func (s *Server) Acks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.acks...)
}

// connectionsOpen answers apps.connections.open, which takes the app-level token as a bearer.
func (s *Server) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	if tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "); tok == "" || tok != s.AppToken {
		reply(w, slackErr("invalid_auth"))
		return
	}
	reply(w, response{"ok": true, "url": s.wsURL})
}

// Slack's own endpoint does not check the Origin header either.
var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socket speaks Socket Mode: hello, then each queued envelope, then reads acks until the client
// goes away; meanwhile the connection is open (Sockets) and Deliver may send on it.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	id, k := s.sockets.add(c)
	defer s.sockets.remove(id)
	hello := response{"type": "hello", "num_connections": 1,
		"debug_info":      response{"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": response{"app_id": "A0BURSARAPP"}}
	if k.write(hello) != nil {
		return
	}
	s.mu.Lock()
	queued := s.queued
	s.queued = nil
	s.mu.Unlock()
	for i, p := range queued {
		if k.write(envelope(p, i)) != nil {
			return
		}
	}
	for {
		var ack struct {
			EnvelopeID string `json:"envelope_id"`
		}
		if c.ReadJSON(&ack) != nil {
			return
		}
		s.mu.Lock()
		s.acks = append(s.acks, ack.EnvelopeID)
		s.record(Message{Method: "socket.ack", Text: ack.EnvelopeID})
		s.mu.Unlock()
	}
}

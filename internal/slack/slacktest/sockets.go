package slacktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// socketSet is the Socket Mode connections open now, each numbered in the order it opened.
type socketSet struct {
	mu   sync.Mutex
	seq  int
	open map[int]*socketConn
}

// socketConn is one open connection; writes to it go one at a time (a WebSocket takes one
// writer), from the connection's own handler or from Deliver.
type socketConn struct {
	mu sync.Mutex
	c  *websocket.Conn
}

func (k *socketConn) write(v any) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.c.WriteJSON(v)
}

func (ss *socketSet) add(c *websocket.Conn) (int, *socketConn) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.open == nil {
		ss.open = map[int]*socketConn{}
	}
	ss.seq++
	k := &socketConn{c: c}
	ss.open[ss.seq] = k
	return ss.seq, k
}

func (ss *socketSet) remove(id int) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.open, id)
}

// Sockets lists the Socket Mode connections open now by number (1 for the first ever opened,
// never reused), in order.
func (s *Server) Sockets() []int {
	s.sockets.mu.Lock()
	defer s.sockets.mu.Unlock()
	ids := make([]int, 0, len(s.sockets.open))
	for id := range s.sockets.open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Deliver sends an interaction payload (the JSON Slack would post) as an "interactive" envelope
// over one of the open Socket Mode connections, picked at random as Slack does
// (slackapi/bolt-python#448), and says which; an error when none is open.
func (s *Server) Deliver(payload []byte) (int, error) {
	s.sockets.mu.Lock()
	ids := make([]int, 0, len(s.sockets.open))
	for id := range s.sockets.open {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		s.sockets.mu.Unlock()
		return 0, errors.New("slacktest: no socket mode connection is open")
	}
	id := ids[rand.IntN(len(ids))]
	k := s.sockets.open[id]
	s.sockets.mu.Unlock()
	return id, k.write(envelope(json.RawMessage(payload), 0))
}

// envelope wraps the i-th payload sent at once as Socket Mode sends an interaction.
func envelope(payload json.RawMessage, i int) response {
	return response{"envelope_id": fmt.Sprintf("env-%d-%d", time.Now().UnixNano(), i), "type": "interactive",
		"accepts_response_payload": false, "payload": payload}
}

package events

import "fmt"

// Message is the payload of one message that Batches made: a batch of events, or one event on
// its own when it is alone on its subject or in its chunk.
type Message struct {
	Subject string // the events' common subject
	ID      string // the Nats-Msg-Id: the event's id, or the batch's BatchID
	Data    []byte
	Events  int // how many events it carries
}

// BatchLimits bound one batch message. Zero fields take the defaults.
type BatchLimits struct {
	MaxEvents int // default 512
	MaxBytes  int // the whole encoded message; default 256 KiB
}

func (l BatchLimits) withDefaults() BatchLimits {
	if l.MaxEvents <= 0 {
		l.MaxEvents = 512
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 256 << 10
	}
	return l
}

// Batches encodes evs into as few messages as the limits allow: grouped by subject (in the order
// the subjects first appear, events in their given order), each group cut into chunks of at most
// MaxEvents events and MaxBytes bytes. An event repeated (same id) on a subject is sent once, as
// JetStream would drop a repeat. An event larger than MaxBytes goes alone. Every event is stamped
// and validated; the first invalid one fails the call, naming its index in evs.
func Batches(evs []Event, lim BatchLimits) ([]Message, error) {
	lim = lim.withDefaults()
	type group struct {
		subject string
		t       Type
		ids     []string
		data    [][]byte
		seen    map[string]bool
	}
	var order []*group
	groups := map[string]*group{}
	for i, e := range evs {
		data, err := Encode(e)
		if err != nil {
			return nil, fmt.Errorf("event %d of the batch: %w", i, err)
		}
		s := e.Subject()
		g := groups[s]
		if g == nil {
			g = &group{subject: s, t: e.EventType(), seen: map[string]bool{}}
			groups[s] = g
			order = append(order, g)
		}
		if id := e.Header().ID; !g.seen[id] {
			g.seen[id] = true
			g.ids, g.data = append(g.ids, id), append(g.data, data)
		}
	}
	var out []Message
	for _, g := range order {
		out = appendChunks(out, g.subject, g.t, g.ids, g.data, lim)
	}
	return out, nil
}

// batchOverhead is the envelope's size around its events: the header with a 32-character id,
// and the closing "]}".
func batchOverhead(t Type) int {
	return len(batchHeader(nil, t, "0123456789abcdef0123456789abcdef")) + len("]}")
}

func batchHeader(b []byte, t Type, id string) []byte {
	b = append(b, `{"type":"`+TypeBatch+`","version":"`+BatchVersion+`","id":"`...)
	b = append(b, id...)
	b = append(b, `","event_type":"`...)
	b = append(b, t...)
	return append(b, `","events":[`...)
}

// appendChunks cuts one subject's encoded events into messages within lim.
func appendChunks(out []Message, subject string, t Type, ids []string, data [][]byte, lim BatchLimits) []Message {
	overhead := batchOverhead(t)
	for start := 0; start < len(data); {
		end, size := start+1, overhead+len(data[start])
		for end < len(data) && end-start < lim.MaxEvents && size+1+len(data[end]) <= lim.MaxBytes {
			size += 1 + len(data[end])
			end++
		}
		out = append(out, message(subject, t, ids[start:end], data[start:end], size))
		start = end
	}
	return out
}

func message(subject string, t Type, ids []string, data [][]byte, size int) Message {
	if len(data) == 1 {
		return Message{Subject: subject, ID: ids[0], Data: data[0], Events: 1}
	}
	id := BatchID(ids)
	b := batchHeader(make([]byte, 0, size), t, id)
	for i, d := range data {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, d...)
	}
	b = append(b, "]}"...)
	return Message{Subject: subject, ID: id, Data: b, Events: len(data)}
}

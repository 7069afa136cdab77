// Package events defines Bursar's typed events, the contract between collector, arbiter, recorder
// and report. Every event is JSON with type, version, a deterministic id and a UTC time, and has one
// encoder and one decoder here so that every part agrees on what a valid event is.
package events

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Type names an event kind on the wire.
type Type string

// The event types of the design brief.
const (
	TypePriceObserved     Type = "price.observed"
	TypeCapacityReclaimed Type = "capacity.reclaimed"
	TypeGPUSample         Type = "gpu.sample"
	TypeTokensSample      Type = "tokens.sample"
	TypeReplicaState      Type = "replica.state"
	TypePlanDecided       Type = "plan.decided"
	TypeActionUpdated     Type = "action.updated"
	TypeBudgetAlert       Type = "budget.alert"
	TypeJobProgress       Type = "job.progress"
	TypeJobState          Type = "job.state"
	TypeCostAnomaly       Type = "cost.anomaly"
)

// Types lists every known event type, in a stable order.
var Types = []Type{
	TypePriceObserved, TypeCapacityReclaimed, TypeGPUSample, TypeTokensSample,
	TypeReplicaState, TypePlanDecided, TypeActionUpdated, TypeBudgetAlert,
	TypeJobProgress, TypeJobState, TypeCostAnomaly,
}

// Version is the schema version this binary writes. Decoding accepts any minor version of the same
// major: minor versions only add optional fields.
const Version = "1.0"

// Meta is the envelope every event carries.
type Meta struct {
	Type    Type      `json:"type"`
	Version string    `json:"version"`
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
}

// Event is implemented by every event type.
type Event interface {
	// EventType is the wire type of the event.
	EventType() Type
	// Subject is the NATS subject the event is published on.
	Subject() string
	// Header returns the envelope, for reading and stamping.
	Header() *Meta
	// identity lists the values that make one observed fact: the same fact gives the same id.
	identity() []string
	// validate checks the event's own fields (the envelope is checked by Validate).
	validate() error
}

// Stamp fills in the envelope: the type, the version and, when empty, the deterministic id.
// The time is the caller's: the event's observation time, never a clock read here.
func Stamp(e Event) Event {
	m := e.Header()
	m.Type = e.EventType()
	m.Version = Version
	if m.ID == "" {
		m.ID = ID(e)
	}
	return e
}

// ID derives the deterministic id of an event from its type, identity and observation time, so a
// re-published fact carries the same id and is dropped by JetStream's duplicate window.
func ID(e Event) string {
	h := sha256.New()
	h.Write([]byte(e.EventType()))
	for _, part := range e.identity() {
		h.Write([]byte{0})
		h.Write([]byte(part))
	}
	h.Write([]byte{0})
	h.Write([]byte(e.Header().At.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Token turns a free-form name into one NATS subject token: dots, spaces, wildcards and other
// separators become '_', and an empty name becomes '_'.
func Token(s string) string {
	if s == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '.' || r == '*' || r == '>' || r <= ' ' || r == 0x7f:
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func subject(parts ...string) string {
	out := make([]string, len(parts))
	out[0] = parts[0]
	for i, p := range parts[1:] {
		out[i+1] = Token(p)
	}
	return strings.Join(out, ".")
}

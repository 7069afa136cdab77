package bus

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// The arbiter's request/reply services (budget writes, job requests, report queries) answer
// through Serve and are asked through Ask. A refusal travels in the HeaderError header unless the
// service answers in a body of its own (Service.Refuse), and an answer larger than a NATS message
// travels in chunks, each but the last marked with HeaderMore.
const (
	HeaderError = "Bursar-Error" // the request was refused; the value says why
	HeaderMore  = "Bursar-More"  // more chunks of the answer follow
)

// AdminSubjects are the subjects of one admin service, bursar.admin.<Service>.<user>.<op> with op
// one of Ops. The server lets each NATS user publish only under its own user token, so the user a
// request's subject names is the identity the server authenticated.
type AdminSubjects struct {
	Service string
	Ops     []string
}

// Subject is where user asks for op.
func (a AdminSubjects) Subject(user, op string) string { return adminSubject(a.Service, user, op) }

// adminPrefix begins every admin service's subjects: bursar.admin.SERVICE.USER.OP.
const adminPrefix = "bursar.admin."

func adminSubject(service, user, op string) string {
	return adminPrefix + service + "." + user + "." + op
}

// Parse reads the user and the operation of a request on subject, or says which subject was
// wanted: one with a user token and an operation of Ops.
func (a AdminSubjects) Parse(subject string) (user, op string, err error) {
	t := strings.Split(subject, ".")
	if len(t) == 5 && t[3] != "" && slices.Contains(a.Ops, t[4]) && subject == a.Subject(t[3], t[4]) {
		return t[3], t[4], nil
	}
	return "", "", fmt.Errorf("%s request on %q: want %s", a.Service, subject, a.Subject("USER", strings.Join(a.Ops, "|")))
}

// CheckUser refuses a user name that cannot be one subject token: the client would ask on
// another subject than its own, or on none.
func (a AdminSubjects) CheckUser(user string) error {
	if user == "" || strings.ContainsAny(user, ".*> \t\r\n") {
		return fmt.Errorf("NATS user %q cannot name a %s subject: use a user name without dots, spaces, '*' or '>'", user, a.Service)
	}
	return nil
}

// Request is one request a Service answers: User and Op are read from an admin subject.
type Request struct {
	Subject  string
	User, Op string
	Data     []byte
}

// Service is a request/reply service: Serve answers each request on Subject (or Admin's subjects)
// with what Handle returns, or with Handle's error as a refusal.
type Service struct {
	Name    string         // what a request is, for the log: "budget write"
	Subject string         // the subjects served; "" with Admin set: all of Admin's
	Admin   *AdminSubjects // when set, a request on a subject Admin cannot Parse is refused unhandled
	Queue   string         // a queue group: one subscriber of it answers each request; "": each does
	Timeout time.Duration  // how long Handle may take for one request
	Workers int            // requests handled at once, each in a goroutine; 0: one at a time, in order
	Handle  func(ctx context.Context, r Request) ([]byte, error)
	Refuse  func(reply *nats.Msg, err error) // writes a refusal into reply; nil: the HeaderError header
	Log     *slog.Logger
}

// Serve subscribes s on nc and returns once the server knows of the subscription; requests are
// answered until the subscription ends, each under a context of ctx.
func Serve(ctx context.Context, nc *nats.Conn, s Service) (*nats.Subscription, error) {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	subject := s.Subject
	if subject == "" && s.Admin != nil {
		subject = s.Admin.Subject("*", "*")
	}
	sub, err := nc.QueueSubscribe(subject, s.Queue, s.onMsg(ctx, nc))
	if err != nil {
		return nil, fmt.Errorf("serving %ss on %s: %w", s.Name, subject, err)
	}
	if err := nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("serving %ss on %s: %w", s.Name, subject, err)
	}
	return sub, nil
}

func (s Service) onMsg(ctx context.Context, nc *nats.Conn) nats.MsgHandler {
	if s.Workers <= 0 {
		return func(m *nats.Msg) { s.answer(ctx, nc, m) }
	}
	sem := make(chan struct{}, s.Workers) // the rest wait in NATS's buffer
	return func(m *nats.Msg) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		go func() {
			defer func() { <-sem }()
			s.answer(ctx, nc, m)
		}()
	}
}

// answer handles m and replies: the answer in chunks, or the refusal.
func (s Service) answer(ctx context.Context, nc *nats.Conn, m *nats.Msg) {
	out, err := s.handle(ctx, m)
	if err == nil {
		s.respond(nc, m, out)
		return
	}
	s.Log.Info(s.Name+" refused", "subject", m.Subject, "err", err)
	reply := nats.NewMsg(m.Reply)
	if s.Refuse != nil {
		s.Refuse(reply, err)
	} else {
		reply.Header.Set(HeaderError, err.Error())
	}
	if err := m.RespondMsg(reply); err != nil {
		s.Log.Warn("answering a "+s.Name, "subject", m.Subject, "err", err)
	}
}

func (s Service) handle(ctx context.Context, m *nats.Msg) ([]byte, error) {
	r := Request{Subject: m.Subject, Data: m.Data}
	if s.Admin != nil {
		var err error
		if r.User, r.Op, err = s.Admin.Parse(m.Subject); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	return s.Handle(ctx, r)
}

// respond sends out to m's reply subject in chunks that fit a NATS message.
func (s Service) respond(nc *nats.Conn, m *nats.Msg, out []byte) {
	chunk := int(nc.MaxPayload()) - 4096
	for {
		reply := nats.NewMsg(m.Reply)
		n := min(len(out), chunk)
		reply.Data, out = out[:n], out[n:]
		if len(out) > 0 {
			reply.Header.Set(HeaderMore, "1")
		}
		if err := nc.PublishMsg(reply); err != nil {
			s.Log.Warn("answering a "+s.Name, "subject", m.Subject, "err", err)
			return
		}
		if len(out) == 0 {
			return
		}
	}
}

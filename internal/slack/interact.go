package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// maxInteractionBody bounds what the endpoint reads; Slack's payloads are a few KB.
const maxInteractionBody = 1 << 20

// ParseInteraction reads an interaction request body: a form with a "payload" field holding the
// JSON callback, as Slack posts it.
func ParseInteraction(body []byte) (slack.InteractionCallback, error) {
	var cb slack.InteractionCallback
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return cb, fmt.Errorf("interaction body is not a form: %w", err)
	}
	payload := form.Get("payload")
	if payload == "" {
		return cb, errors.New("interaction body has no payload field")
	}
	if err := json.Unmarshal([]byte(payload), &cb); err != nil {
		return cb, fmt.Errorf("interaction payload is not Slack's JSON: %w", err)
	}
	if cb.Type == "" {
		return cb, errors.New("interaction payload has no type")
	}
	return cb, nil
}

// InteractionHandler is the HTTP endpoint Slack posts button clicks to. A request is refused with
// 401, logged and ignored unless its signature matches the signing secret, its timestamp is
// within five minutes and it was not seen before. A genuine request gets 200 (Slack shows an
// error to the user otherwise), unless no leading arbiter took it (503, forward.go); what came
// of it is logged.
type InteractionHandler struct {
	verifier *Verifier
	buttons  ButtonHandler
	log      *slog.Logger
}

// ButtonHandler takes a click on Bursar's buttons, and answers ErrNotAButton for one that is not
// on its own. *Approvals and *Anomalies are ones; Buttons hands a click to several.
type ButtonHandler interface {
	Handle(ctx context.Context, cb slack.InteractionCallback) error
}

// Buttons hands a click to the first of its handlers that owns the button.
type Buttons []ButtonHandler

// Handle tries each handler in turn until one owns the button.
func (bs Buttons) Handle(ctx context.Context, cb slack.InteractionCallback) error {
	for _, b := range bs {
		if err := b.Handle(ctx, cb); !errors.Is(err, ErrNotAButton) {
			return err
		}
	}
	return ErrNotAButton
}

// NewInteractionHandler returns the endpoint, handing verified clicks to b (approvals, and
// anomalies' answers with Buttons).
func NewInteractionHandler(v *Verifier, b ButtonHandler, log *slog.Logger) *InteractionHandler {
	return &InteractionHandler{verifier: v, buttons: b, log: log}
}

func (h *InteractionHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInteractionBody))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err := h.verifier.Verify(r.Header, body); err != nil {
		h.log.Warn("slack interaction refused", "reason", err, "remote", r.RemoteAddr)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	cb, err := ParseInteraction(body)
	if err != nil {
		h.log.Warn("slack interaction unreadable", "err", err)
		http.Error(w, "bad payload", http.StatusBadRequest)
		return
	}
	// Slack wants an answer within 3 s; the work is a few API calls, done on the request's context.
	err = h.buttons.Handle(r.Context(), cb)
	if errors.Is(err, ErrNoLeader) {
		h.log.Warn("slack interaction not taken: no leading arbiter answered", "user", cb.User.ID, "err", err)
		http.Error(w, "no leading arbiter; try again", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		h.log.Warn("slack interaction changed nothing", "user", cb.User.ID, "err", err)
	}
	w.WriteHeader(http.StatusOK)
}

// socketClient is the part of slack-go's Socket Mode client RunSocketMode uses.
type socketClient interface {
	RunContext(ctx context.Context) error
	Ack(req socketmode.Request, payload ...any) error
}

// RunSocketMode takes interactions over Socket Mode, for installations with no public endpoint.
// The WebSocket is opened with the app-level token, which authenticates Slack's side, so no
// signature is checked; the same approver rules apply. It returns when ctx ends.
func RunSocketMode(ctx context.Context, client *socketmode.Client, a ButtonHandler, log *slog.Logger) error {
	return runSocket(ctx, client, client.Events, a, log)
}

func runSocket(ctx context.Context, client socketClient, evs <-chan socketmode.Event, a ButtonHandler, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- client.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			<-done
			return nil
		case err := <-done:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("slack socket mode: %w", err)
		case evt := <-evs:
			if evt.Type != socketmode.EventTypeInteractive || evt.Request == nil {
				log.Debug("slack socket mode event", "type", evt.Type)
				continue
			}
			if err := client.Ack(*evt.Request); err != nil {
				log.Warn("acknowledging a slack interaction", "err", err)
			}
			cb, ok := evt.Data.(slack.InteractionCallback)
			if !ok {
				continue
			}
			if err := a.Handle(ctx, cb); err != nil {
				log.Warn("slack interaction changed nothing", "user", cb.User.ID, "err", err)
			}
		}
	}
}

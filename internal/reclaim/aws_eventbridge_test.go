package reclaim

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/bursar-dev/bursar/internal/events"
)

// fakeSQS speaks the AWS JSON 1.0 protocol the SQS SDK uses (X-Amz-Target AmazonSQS.*). A
// received message stays on the queue, invisible to nobody, until it is deleted, so a watcher
// that forgets to delete sees it again.
type fakeSQS struct {
	mu       sync.Mutex
	queue    map[string]string // receipt handle -> body
	order    []string
	deleted  []string
	status   int // when set, ReceiveMessage answers this status
	receives int
}

func newFakeSQS(t *testing.T) (*fakeSQS, *httptest.Server) {
	f := &fakeSQS{queue: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeSQS) send(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := fmt.Sprintf("AQEBreceipt%d==", len(f.order))
	f.queue[h] = body
	f.order = append(f.order, h)
}

func (f *fakeSQS) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var in struct{ QueueUrl, ReceiptHandle string }
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &in); err != nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json-1.0") {
		http.Error(w, `{"__type":"com.amazonaws.sqs#InvalidParameterValue"}`, http.StatusBadRequest)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256") {
		http.Error(w, `{"__type":"com.amazon.coral.service#MissingAuthenticationTokenException"}`, http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch r.Header.Get("X-Amz-Target") {
	case "AmazonSQS.ReceiveMessage":
		f.receives++
		if f.status != 0 {
			w.WriteHeader(f.status)
			fmt.Fprint(w, `{"__type":"com.amazonaws.sqs#InternalError","message":"try again"}`)
			return
		}
		type msg struct{ MessageId, ReceiptHandle, MD5OfBody, Body string }
		out := struct{ Messages []msg }{Messages: []msg{}}
		for _, h := range f.order {
			if body, ok := f.queue[h]; ok {
				sum := md5.Sum([]byte(body))
				out.Messages = append(out.Messages, msg{MessageId: "m-" + h, ReceiptHandle: h,
					MD5OfBody: hex.EncodeToString(sum[:]), Body: body})
			}
		}
		json.NewEncoder(w).Encode(out)
	case "AmazonSQS.DeleteMessage":
		delete(f.queue, in.ReceiptHandle)
		f.deleted = append(f.deleted, in.ReceiptHandle)
		fmt.Fprint(w, `{}`)
	default:
		http.Error(w, `{"__type":"com.amazonaws.sqs#UnsupportedOperation"}`, http.StatusBadRequest)
	}
}

func (f *fakeSQS) pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// sqsBody is the EventBridge event inside the recorded ReceiveMessage answer.
func sqsBody(t *testing.T) string {
	var out struct{ Messages []struct{ Body string } }
	if err := json.Unmarshal(fixture(t, "aws-sqs-receive-message-spot-interruption.json"), &out); err != nil {
		t.Fatal(err)
	}
	return out.Messages[0].Body
}

func newEventBridgeWatcher(t *testing.T, srv *httptest.Server, pub Publisher) *EventBridgeWatcher {
	ac := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""),
		RetryMaxAttempts: 1}
	cfg := AWSEventBridgeConfig{QueueURL: srv.URL + "/123456789012/bursar-reclaim", Region: "us-east-1",
		Location: "aws-default", Locations: map[string]string{"us-east-1": "aws-use1"}, WaitTime: time.Second}
	return NewEventBridgeWatcher(cfg, NewSQSClientFrom(ac, srv.URL), Deps{Publisher: pub})
}

func TestEventBridgePublishesOncePerEvent(t *testing.T) {
	tests := []struct {
		name         string
		bodies       []string
		wantKinds    []events.ReclaimKind
		wantDeadline []time.Time
	}{
		{name: "spot interruption from the recorded SQS message", bodies: []string{sqsBody(t)},
			wantKinds:    []events.ReclaimKind{events.ReclaimInterruption},
			wantDeadline: []time.Time{mustTime(t, "2026-09-13T12:00:00Z")}},
		{name: "rebalance recommendation", bodies: []string{string(fixture(t, "aws-eventbridge-rebalance-recommendation.json"))},
			wantKinds:    []events.ReclaimKind{events.ReclaimRebalance},
			wantDeadline: []time.Time{mustTime(t, "2026-09-13T11:42:00Z")}},
		{name: "the same event delivered twice", bodies: []string{sqsBody(t),
			string(fixture(t, "aws-eventbridge-spot-interruption.json"))},
			wantKinds:    []events.ReclaimKind{events.ReclaimInterruption},
			wantDeadline: []time.Time{mustTime(t, "2026-09-13T12:00:00Z")}},
		{name: "malformed and unrelated messages are dropped", bodies: []string{`{"detail-type": `,
			`{"detail-type":"EC2 Instance State-change Notification","detail":{"state":"running"}}`, `[]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeSQS(t)
			for _, b := range tt.bodies {
				f.send(b)
			}
			pub := newRecorder()
			w := newEventBridgeWatcher(t, srv, pub)
			if err := w.Poll(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := f.pending(); n != 0 {
				t.Errorf("%d messages left on the queue, want all deleted", n)
			}
			got := pub.reclaims()
			if len(got) != len(tt.wantKinds) {
				t.Fatalf("published %d notices, want %d", len(got), len(tt.wantKinds))
			}
			for i, e := range got {
				if e.Kind != tt.wantKinds[i] || !e.Deadline.Equal(tt.wantDeadline[i]) || e.Instance != "i-0b662ef9931388ba0" ||
					e.Location != "aws-use1" || e.Region != "us-east-1" || e.Source != "aws-eventbridge" {
					t.Errorf("notice %d = %+v, want %s due %s", i, e, tt.wantKinds[i], tt.wantDeadline[i])
				}
			}
		})
	}
}

func TestEventBridgeKeepsMessagesItCouldNotPublish(t *testing.T) {
	f, srv := newFakeSQS(t)
	f.send(sqsBody(t))
	pub := newRecorder()
	pub.setFail(fmt.Errorf("nats: timeout"))
	w := newEventBridgeWatcher(t, srv, pub)
	if err := w.Poll(context.Background()); err == nil {
		t.Fatal("Poll() hid a failed publish")
	}
	if f.pending() != 1 {
		t.Fatal("the message was deleted before its notice was published")
	}
	pub.setFail(nil)
	if err := w.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.pending() != 0 || len(pub.reclaims()) != 1 {
		t.Fatalf("after recovery: %d pending, %d published; want 0 and 1", f.pending(), len(pub.reclaims()))
	}
}

func TestEventBridgeReportsA5xx(t *testing.T) {
	f, srv := newFakeSQS(t)
	f.status = http.StatusInternalServerError
	w := newEventBridgeWatcher(t, srv, newRecorder())
	err := w.Poll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "receiving from") {
		t.Fatalf("Poll() = %v, want a receive error naming the queue", err)
	}
}

package budget

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/bursar-dev/bursar/internal/bus/bustest"
)

func TestStoreKeepsRevisionsWithActorAndTime(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	s, err := OpenStore(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	p := validPolicy()
	if _, err := s.Put(ctx, p, "alice", t0); err != nil {
		t.Fatal(err)
	}
	p.Limit = 60000
	if _, err := s.Put(ctx, p, "bob", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	bad := p
	bad.Limit = -1
	var inv *InvalidError
	if _, err := s.Put(ctx, bad, "mallory", t0); !errors.As(err, &inv) {
		t.Fatalf("invalid policy stored: err = %v", err)
	}
	got, err := s.Get(ctx, p.Name)
	if err != nil || got.Policy.Limit != 60000 || got.Actor != "bob" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if !reflect.DeepEqual(got.Policy, p) {
		t.Errorf("stored policy changed:\n got %+v\nwant %+v", got.Policy, p)
	}
	if _, err := s.Delete(ctx, p.Name, "carol", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, p.Name); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after delete: %v", err)
	}
	hist, err := s.History(ctx, p.Name)
	if err != nil {
		t.Fatal(err)
	}
	var who []string
	for i, r := range hist {
		who = append(who, r.Actor)
		if i > 0 && r.Revision <= hist[i-1].Revision {
			t.Errorf("revisions out of order: %v", hist)
		}
	}
	if !reflect.DeepEqual(who, []string{"alice", "bob", "carol"}) || !hist[2].Deleted || !hist[0].At.Equal(t0) {
		t.Errorf("history = %+v", hist)
	}
	if _, err := s.Put(ctx, p, "", t0); err == nil {
		t.Error("a write without an actor was accepted")
	}
	if _, err := s.History(ctx, "never-was"); !errors.Is(err, ErrNotFound) {
		t.Errorf("History of a missing policy: %v", err)
	}
}

func TestStoreListAndWatch(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := OpenStore(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	a, b := validPolicy(), validPolicy()
	a.Name, b.Name = "a", "b"
	if _, err := s.Put(ctx, b, "alice", t0); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := make(chan []string, 16)
	go func() {
		_ = s.Watch(ctx, slog.New(slog.DiscardHandler), func(ps []Policy) {
			mu.Lock()
			defer mu.Unlock()
			var names []string
			for _, p := range ps {
				names = append(names, p.Name)
			}
			seen <- names
		})
	}()
	wait := func(want []string) {
		t.Helper()
		for {
			select {
			case got := <-seen:
				if reflect.DeepEqual(got, want) {
					return
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("watch never showed %v", want)
			}
		}
	}
	wait([]string{"b"})
	if _, err := s.Put(ctx, a, "alice", t0); err != nil {
		t.Fatal(err)
	}
	wait([]string{"a", "b"})
	if _, err := s.Delete(ctx, "b", "alice", t0); err != nil {
		t.Fatal(err)
	}
	wait([]string{"a"})
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Policy.Name != "a" {
		t.Errorf("List = %+v, %v", list, err)
	}
}

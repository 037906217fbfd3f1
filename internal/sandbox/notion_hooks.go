/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// The sending both Notion senders share (the automations' "Send webhook"
// in notion_automation.go, the subscriptions' events in notion_events.go):
// one queue per receiver, the POST, Close and WaitWebhooksIdle.

// notionHooks is the state of both senders, guarded by Notion.mu (ctx,
// cancel and workers excepted). Each automation and subscription has its
// own queue (notionOutbox), whose deliveries go out in order on a
// goroutine of its own, so that a slow receiver delays no other.
type notionHooks struct {
	ctx     context.Context
	cancel  context.CancelFunc
	workers sync.WaitGroup
	closed  bool
	pending int           // deliveries queued or in flight, and open windows
	idle    chan struct{} // closed when pending drops to 0
	client  *http.Client
	timeout time.Duration

	automations   map[string]*notionAutomation
	autoAttempts  int
	autoRetryBase time.Duration

	subs           map[string]*notionSubscription
	eventRetryBase time.Duration
	window         time.Duration
}

// notionOutbox is one receiver's queue.
type notionOutbox struct {
	queue   []func()
	running bool
}

// newNotionHooks has the defaults: a 10 s timeout per delivery (Notion
// documents none, for either sender; Google's push sender gets the same in
// calendar_push.go), one attempt per automation firing, and the event
// retry schedule and aggregation window SetEventRetrySchedule and
// SetEventAggregation describe.
func newNotionHooks() *notionHooks {
	ctx, cancel := context.WithCancel(context.Background())
	return &notionHooks{ctx: ctx, cancel: cancel, client: &http.Client{}, timeout: 10 * time.Second,
		automations: map[string]*notionAutomation{}, autoAttempts: 1, autoRetryBase: time.Second,
		subs: map[string]*notionSubscription{}, eventRetryBase: 680 * time.Second, window: time.Minute}
}

// SetWebhookTimeout bounds one delivery attempt of either sender: no
// answer within it is a failure, Status 0.
func (n *Notion) SetWebhookTimeout(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hooks.timeout = d
}

// Close stops both senders: queued deliveries are abandoned, attempts in
// flight cancelled, and their goroutines gone when it returns.
func (n *Notion) Close() {
	n.mu.Lock()
	closed := n.hooks.closed
	n.hooks.closed = true
	n.mu.Unlock()
	if !closed {
		n.hooks.cancel()
	}
	n.hooks.workers.Wait()
}

// WaitWebhooksIdle waits until no delivery is queued or being made and no
// aggregation window holds an event.
func (n *Notion) WaitWebhooksIdle(ctx context.Context) error {
	n.mu.Lock()
	idle := n.hooks.idle
	n.mu.Unlock()
	if idle == nil {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startLocked counts one more piece of pending work run by a goroutine of
// its own; it reports false once the senders are closed.
func (h *notionHooks) startLocked() bool {
	if h.closed {
		return false
	}
	if h.pending == 0 {
		h.idle = make(chan struct{})
	}
	h.pending++
	h.workers.Add(1)
	return true
}

// doneLocked marks k pieces of pending work finished.
func (h *notionHooks) doneLocked(k int) {
	h.pending -= k
	if h.pending == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

// enqueueLocked queues a delivery on a receiver's queue, starting its
// goroutine when none runs.
func (n *Notion) enqueueLocked(ob *notionOutbox, job func()) {
	h := n.hooks
	if !ob.running {
		if !h.startLocked() {
			return
		}
		ob.running = true
		ob.queue = append(ob.queue, job)
		go n.drain(ob)
		return
	}
	if h.closed {
		return
	}
	h.pending++
	ob.queue = append(ob.queue, job)
}

// drain runs a queue's deliveries in order until it is empty.
func (n *Notion) drain(ob *notionOutbox) {
	defer n.hooks.workers.Done()
	for {
		n.mu.Lock()
		if len(ob.queue) == 0 || n.hooks.closed {
			n.hooks.doneLocked(len(ob.queue))
			ob.queue, ob.running = nil, false
			n.mu.Unlock()
			return
		}
		job := ob.queue[0]
		ob.queue = ob.queue[1:]
		n.mu.Unlock()
		job()
		n.mu.Lock()
		n.hooks.doneLocked(1)
		n.mu.Unlock()
	}
}

// post makes one attempt, n.mu not held: it returns the status and the
// start of the answer's body, status 0 when there was no answer.
func (n *Notion) post(url string, header http.Header, body []byte) (int, string) {
	n.mu.Lock()
	timeout, client := n.hooks.timeout, n.hooks.client
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(n.hooks.ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, ""
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req) //nolint:gosec // G704: the sandbox calls the URL a test registered
	if err != nil {
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(answer)
}

// sleep waits d; it reports false when the senders close first.
func (n *Notion) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-n.hooks.ctx.Done():
		return false
	}
}

// compactJSON is v as JavaScript's JSON.stringify writes it: compact, and
// "<", ">" and "&" unescaped. The docs' signature sample recomputes the
// HMAC over JSON.stringify(body) (https://developers.notion.com/reference/webhooks,
// Step 3), which works only on bodies written so.
func compactJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the sandbox's own maps and structs always encode
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// newUUID is a random (version 4) UUID: the ids of automations, actions,
// subscriptions and events.
func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (see capability.Random)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

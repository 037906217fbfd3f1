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
	"context"
	"crypto/rand"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// This file is the push sender of the Calendar emulator, after "Push
// notifications"
// (https://developers.google.com/workspace/calendar/api/guides/push);
// calendar_watch.go opens and stops the channels it sends to.

// PushFault makes the push sender misbehave for the notifications that
// follow; Google warns that "Notifications are not 100% reliable. Expect a
// small percentage of messages to get dropped under normal working
// conditions." (guides/push). Counters count notifications, one per
// channel and change.
type PushFault struct {
	// Drop skips the next N notifications (their message numbers are used
	// up, so the receiver sees a gap).
	Drop int `json:"drop,omitempty"`
	// Duplicate sends each of the next N notifications twice.
	Duplicate int `json:"duplicate,omitempty"`
	// Delay is waited before sending every notification, until the fault
	// is replaced.
	Delay Duration `json:"delay,omitempty"`
	// Reorder holds the next notification back and sends it after the
	// following one of the same channel.
	Reorder bool `json:"reorder,omitempty"`
}

// PushRecord is one delivery attempt.
type PushRecord struct {
	ChannelID     string `json:"channelId"`
	MessageNumber int64  `json:"messageNumber"`
	State         string `json:"state"`
	// Status is the receiver's answer, 0 on a transport error or a drop.
	Status int `json:"status"`
	// Attempt counts from 1; retries of one notification count up.
	Attempt int `json:"attempt"`
	// Dropped is a notification a Drop fault swallowed (nothing was sent).
	Dropped bool      `json:"dropped,omitempty"`
	Time    time.Time `json:"time"`
}

type pushMsg struct {
	state string
	num   int64
	times int // 2 for a duplicated notification
	delay time.Duration
}

// SetPushFault replaces the push fault; the zero fault clears it.
func (c *GoogleCalendar) SetPushFault(f PushFault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fault = f
}

// Pushes returns every delivery attempt so far, in order.
func (c *GoogleCalendar) Pushes() []PushRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]PushRecord(nil), c.pushes...)
}

// Notify pushes "exists" to every open channel of the calendar, with no
// change to its events.
func (c *GoogleCalendar) Notify(calendarID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cal, ok := c.calendars[calendarID]; ok {
		c.notifyLocked(cal)
	}
}

// notifyLocked pushes "exists" to every open channel of the calendar.
func (c *GoogleCalendar) notifyLocked(cal *calState) {
	now := c.now()
	ids := make([]string, 0, len(c.channels))
	for id, ch := range c.channels {
		if ch.CalendarID == cal.id && ch.openAt(now) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		c.enqueueLocked(c.channels[id], "exists")
	}
}

// enqueueLocked numbers a notification, applies the push fault and queues
// it on the channel's own worker, so that one slow receiver delays no
// other channel.
func (c *GoogleCalendar) enqueueLocked(ch *calChannel, state string) {
	if c.closed {
		return
	}
	if state == "sync" {
		ch.msgNum = 1
	} else {
		// Message numbers increase but "are not guaranteed to be
		// sequential" (guides/push, X-Goog-Message-Number): steps of 1 to 3.
		step, _ := rand.Int(rand.Reader, big.NewInt(3))
		ch.msgNum += 1 + step.Int64()
	}
	m := pushMsg{state: state, num: ch.msgNum, times: 1, delay: time.Duration(c.fault.Delay)}
	if c.fault.Drop > 0 {
		c.fault.Drop--
		c.pushes = append(c.pushes, PushRecord{ChannelID: ch.ID, MessageNumber: m.num, State: state, Dropped: true, Time: c.now()})
		return
	}
	if c.fault.Duplicate > 0 {
		c.fault.Duplicate--
		m.times = 2
	}
	if c.fault.Reorder && ch.held == nil {
		c.fault.Reorder = false
		ch.held = &m
		return
	}
	c.queueLocked(ch, m)
	if ch.held != nil {
		held := *ch.held
		ch.held = nil
		c.queueLocked(ch, held)
	}
}

func (c *GoogleCalendar) queueLocked(ch *calChannel, m pushMsg) {
	ch.queue = append(ch.queue, m)
	if c.pending == 0 {
		c.idle = make(chan struct{})
	}
	c.pending++
	if !ch.running {
		ch.running = true
		c.workers.Add(1)
		go c.deliverLoop(ch)
	}
}

// doneLocked marks n notifications finished.
func (c *GoogleCalendar) doneLocked(n int) {
	c.pending -= n
	if c.pending == 0 && c.idle != nil {
		close(c.idle)
		c.idle = nil
	}
}

// deliverLoop sends a channel's notifications in order until its queue is
// empty.
func (c *GoogleCalendar) deliverLoop(ch *calChannel) {
	defer c.workers.Done()
	for {
		c.mu.Lock()
		if len(ch.queue) == 0 || c.closed {
			c.doneLocked(len(ch.queue))
			ch.queue = nil
			ch.running = false
			c.mu.Unlock()
			return
		}
		m := ch.queue[0]
		ch.queue = ch.queue[1:]
		c.mu.Unlock()

		for range m.times {
			if !c.deliver(ch, m) {
				break
			}
		}
		c.mu.Lock()
		c.doneLocked(1)
		c.mu.Unlock()
	}
}

// deliver sends one notification, retrying 500, 502, 503 and 504 with
// exponential backoff: "If your service uses Google's API client library
// and returns 500, 502, 503, or 504, the Google Calendar API retries with
// exponential backoff. Every other return status code is considered to be
// a message failure." (guides/push, "Respond to notifications"). A
// transport error is retried too. It reports false when the emulator is
// closing.
func (c *GoogleCalendar) deliver(ch *calChannel, m pushMsg) bool {
	if m.delay > 0 && !c.sleep(m.delay) {
		return false
	}
	wait := c.PushRetryBase
	if wait <= 0 {
		wait = time.Second
	}
	attempts := c.PushAttempts
	if attempts <= 0 {
		attempts = 5
	}
	for attempt := 1; attempt <= attempts; attempt++ {
		c.mu.Lock()
		// "Expired or stopped channels get nothing": checked before
		// every attempt.
		open := ch.openAt(c.now())
		c.mu.Unlock()
		if !open {
			return true
		}
		status := c.post(ch, m)
		c.mu.Lock()
		c.pushes = append(c.pushes, PushRecord{ChannelID: ch.ID, MessageNumber: m.num, State: m.state, Status: status, Attempt: attempt, Time: c.now()})
		c.mu.Unlock()
		switch status {
		case 0, http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		default:
			// Success ("200, 201, 202, 204, or 102", guides/push) or a
			// failure Google does not retry.
			return true
		}
		if attempt < attempts && !c.sleep(wait) {
			return false
		}
		wait *= 2
	}
	return true
}

func (c *GoogleCalendar) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.stop:
		return false
	}
}

// post makes one attempt; it returns the status, 0 on a transport error.
func (c *GoogleCalendar) post(ch *calChannel, m pushMsg) int {
	timeout := c.PushTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ch.Address, http.NoBody)
	if err != nil {
		return 0
	}
	// The notification's headers (guides/push, "Understand the
	// notification message format"); it has no body.
	h := req.Header
	h.Set("X-Goog-Channel-ID", ch.ID)
	if ch.Token != "" {
		h.Set("X-Goog-Channel-Token", ch.Token)
	}
	h.Set("X-Goog-Channel-Expiration", ch.Expiration.UTC().Format(http.TimeFormat))
	h.Set("X-Goog-Resource-ID", ch.ResourceID)
	h.Set("X-Goog-Resource-URI", ch.ResourceURI)
	h.Set("X-Goog-Resource-State", m.state)
	h.Set("X-Goog-Message-Number", strconv.FormatInt(m.num, 10))
	// Google's user agent for push notifications
	// (https://developers.google.com/search/docs/crawling-indexing/google-special-case-crawlers: APIs-Google).
	h.Set("User-Agent", "APIs-Google (+https://developers.google.com/webmasters/APIs-Google.html)")
	resp, err := c.httpClient().Do(req) //nolint:gosec // G704: the sandbox calls the address a test registered
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func (c *GoogleCalendar) httpClient() *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == nil {
		// Like Google's sender, it follows no redirects.
		c.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return c.client
}

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

package calendar

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/contract/calendarpush"
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/sandbox"
)

// The push route benchmark: Google Calendar push notifications to the
// webhook against bare-client writes of the same count at the same
// concurrency.

// pushTarget is a watch's open channel and its token, as Google would
// send them.
type pushTarget struct{ channel, token string }

// pushTargets reads each watch's channel (from the manager's cache) and
// its channel token (from its Secret).
func pushTargets(ctx context.Context, c client.Client, rig *calendarRig, names []string) ([]pushTarget, error) {
	targets := make([]pushTarget, len(names))
	for i, name := range names {
		var w v1alpha1.CalendarWatch
		if err := rig.Mgr.GetClient().Get(ctx, types.NamespacedName{Namespace: benchNS, Name: name}, &w); err != nil {
			return nil, err
		}
		var s corev1.Secret
		if err := c.Get(ctx, types.NamespacedName{Namespace: benchNS, Name: calendarwatch.ChannelSecretName(name)}, &s); err != nil {
			return nil, err
		}
		targets[i] = pushTarget{channel: w.Status.Channel.ID, token: string(s.Data[calendarwatch.ChannelTokenKey])}
	}
	return targets, nil
}

// pusher posts valid notifications round the targets, each with a higher
// message number than the sandbox's: i is accepted when the webhook says
// so.
func pusher(ctx context.Context, url string, targets []pushTarget, msg *atomic.Int64) func(i int) (bool, error) {
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128}}
	return func(i int) (bool, error) {
		t := targets[i%len(targets)]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, http.NoBody)
		if err != nil {
			return false, err
		}
		h := req.Header
		h.Set("X-Goog-Channel-ID", t.channel)
		h.Set("X-Goog-Channel-Token", t.token)
		h.Set("X-Goog-Resource-ID", "bench")
		h.Set("X-Goog-Resource-State", "exists")
		h.Set("X-Goog-Message-Number", strconv.FormatInt(msg.Add(1), 10))
		resp, err := httpc.Do(req)
		if err != nil {
			return false, err
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		return strings.Contains(string(body), `"accepted":true`), nil
	}
}

// benchPush measures the push route against bare-client writes of the same
// count at the same concurrency.
func benchPush(ctx context.Context, c client.Client, rig *calendarRig, names []string, o calendarOptions) error {
	targets, err := pushTargets(ctx, c, rig, names)
	if err != nil {
		return err
	}
	// Message numbers above the sandbox's, rising across the baseline's
	// records and the pushes.
	var msg atomic.Int64
	msg.Store(1000)
	push := pusher(ctx, rig.HookURL+calendarpush.PushPath, targets, &msg)
	var seq atomic.Int64
	bare := func(i int) (bool, error) {
		err := touch(ctx, c, names[i%len(names)], strconv.FormatInt(seq.Add(1), 10))
		return err == nil, err
	}
	record := func(i int) (bool, error) {
		k := i % len(names)
		n := calendarpush.Notification{ChannelID: targets[k].channel, MessageNumber: msg.Add(1), State: "exists"}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{v1alpha1.CalendarNotificationAnnotation: n.String()}}})
		err := c.Patch(ctx, &v1alpha1.CalendarWatch{ObjectMeta: metav1.ObjectMeta{Name: names[k], Namespace: benchNS}}, client.RawPatch(types.MergePatchType, patch))
		return err == nil, err
	}

	fmt.Printf("\n3. push route: %d valid notifications per client count, across %d watches (each accepted one is a metadata patch and queues a sync);\n"+
		"   baselines, as many writes on the same watches at the same concurrency by a bare client: (a) merge-patching an annotation that reconciles nothing;\n"+
		"   (b) merge-patching the notification record itself, which the controller syncs as it syncs the route's: the route's cost beyond its one write (goal: ratio (b) ≥ 0.9)\n", o.pushes, len(names))
	fmt.Printf("%-8s %12s %10s %12s %10s %12s %10s %10s %10s\n", "clients", "(a) w/s", "p99", "(b) w/s", "p99", "accepted/s", "p99", "ratio (b)", "ratio (a)")
	syncsBefore := rig.Box.Calls(sandbox.CalendarEventsList)
	var lastPush time.Time
	var catchUp []string
	for _, clients := range []int{1, 16, 64} {
		// Each run starts with the controller idle: the syncs the last
		// run's notifications queued are not the next baseline's load.
		if err := waitNotificationsHandled(ctx, c, len(names), 3*time.Minute); err != nil {
			return err
		}
		if !lastPush.IsZero() {
			catchUp = append(catchUp, time.Since(lastPush).Round(100*time.Millisecond).String())
		}
		if err := pushRow(ctx, c, len(names), clients, o.pushes, bare, record, push); err != nil {
			return err
		}
		lastPush = time.Now()
	}
	// The controller syncs every watch notified; how long it takes to
	// catch up once the pushes stop.
	if err := waitNotificationsHandled(ctx, c, len(names), 3*time.Minute); err != nil {
		return err
	}
	catchUp = append(catchUp, time.Since(lastPush).Round(100*time.Millisecond).String())
	// Baseline (b) records notifications as the route does, and the
	// controller syncs for those too.
	fmt.Printf("controller caught up (every watch synced its last notification) %s after each run's last push (1, 16, 64 clients); %d events.list calls for %d recorded notifications (%d pushes, %d baseline (b) records; a burst on one watch is one sync)\n",
		strings.Join(catchUp, ", "), rig.Box.Calls(sandbox.CalendarEventsList)-syncsBefore, 6*o.pushes, 3*o.pushes, 3*o.pushes)
	return nil
}

// pushRow drives the baselines, then the pushes, with clients clients,
// the controller idle before each, and prints the table's row.
func pushRow(ctx context.Context, c client.Reader, watches, clients, count int, bare, record, push func(int) (bool, error)) error {
	baseRate, baseLat, _, err := bench.Drive(clients, count, bare)
	if err != nil {
		return err
	}
	recRate, recLat, _, err := bench.Drive(clients, count, record)
	if err != nil {
		return err
	}
	if err := waitNotificationsHandled(ctx, c, watches, 3*time.Minute); err != nil {
		return err
	}
	rate, lat, refused, err := bench.Drive(clients, count, push)
	if err != nil {
		return err
	}
	fmt.Printf("%-8d %12.0f %10s %12.0f %10s %12.0f %10s %10.2f %10.2f", clients, baseRate, bench.PctMs(baseLat, 99), recRate, bench.PctMs(recLat, 99),
		rate, bench.PctMs(lat, 99), rate/recRate, rate/baseRate)
	if refused > 0 {
		fmt.Printf("   (%d not accepted)", refused)
	}
	fmt.Println()
	return nil
}

// waitNotificationsHandled polls the API server (the manager's cache lags
// seconds behind a burst of pushes) until no watch has a recorded
// notification its status has not handled.
func waitNotificationsHandled(ctx context.Context, api client.Reader, count int, limit time.Duration) error {
	pending := 0
	err := poll.Until(ctx, "", 200*time.Millisecond, limit, func() (bool, error) {
		var list v1alpha1.CalendarWatchList
		if err := api.List(ctx, &list, client.InNamespace(benchNS)); err != nil {
			return false, poll.Stop(err)
		}
		pending = 0
		for i := range list.Items {
			w := &list.Items[i]
			n, ok := calendarpush.ParseNotification(w.Annotations[v1alpha1.CalendarNotificationAnnotation])
			last := w.Status.LastNotification
			if ok && (last == nil || last.ChannelID != n.ChannelID || last.MessageNumber < n.MessageNumber) {
				pending++
			}
		}
		return pending == 0 && len(list.Items) == count, nil
	})
	if poll.Stopped(err) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%d watches still have a notification to sync after %s", pending, limit)
	}
	return nil
}

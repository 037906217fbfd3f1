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

package setup

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// recordKinds are the objects the webhook's routes store, one for each
// event they take (a Notion page event, a timesheet session), and never
// read back: the name, set before the create, is the event's idempotency
// key, and an answer needs only created, already there, or refused.
var recordKinds = []client.Object{&v1alpha1.PaperSync{}, &v1alpha1.SheetSync{}}

// recordsClient is the webhook's client. A Create of a record kind, with
// no options, is the POST the client would send, with the answer's
// status read and the object in its body not decoded: decoding it (its
// managedFields too) was a sixth of the webhook's CPU per event in the
// Notion benchmark (hack/bench -suite notion). Such a Create leaves obj
// as it was sent: no resourceVersion, no UID. Those creates go over
// HTTP/1.1 connections of their own (recordsHTTPClient). A List by one
// indexed field, uncopied, as every route begins with, reads the
// informer's index (indexedLists). Every other call is the client's own.
type recordsClient struct {
	client.Client
	kinds map[schema.GroupVersionKind]*recordREST
	// indexed answers the routes' Lists by an indexed field from the
	// informer's index (nil without a cache that has informers).
	indexed *indexedLists
}

// recordREST is the REST client of one record kind, built at its first
// create (the mapping may need discovery, which a client being built does
// not wait for), and again at the next while that fails.
type recordREST struct {
	mu       sync.Mutex
	build    func() (rest.Interface, string, error)
	rc       rest.Interface
	resource string
}

// get is the kind's REST client and resource name.
func (k *recordREST) get() (rest.Interface, string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.rc == nil {
		rc, resource, err := k.build()
		if err != nil {
			return nil, "", err
		}
		k.rc, k.resource = rc, resource
	}
	return k.rc, k.resource, nil
}

// newRecordsClient is client.New with the record kinds' creates not
// decoded: the webhook cluster's NewClient.
func newRecordsClient(config *rest.Config, opts client.Options) (client.Client, error) {
	c, err := client.New(config, opts)
	if err != nil {
		return nil, err
	}
	httpc, err := RecordsHTTPClient(config)
	if err != nil {
		return nil, err
	}
	codecs := serializer.NewCodecFactory(opts.Scheme)
	rc := &recordsClient{Client: c, kinds: map[schema.GroupVersionKind]*recordREST{}}
	if opts.Cache != nil {
		if informers, ok := opts.Cache.Reader.(cache.Informers); ok {
			rc.indexed = &indexedLists{informers: informers, scheme: opts.Scheme}
		}
	}
	for _, obj := range recordKinds {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return nil, err
		}
		rc.kinds[gvk] = &recordREST{build: func() (rest.Interface, string, error) {
			m, err := opts.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return nil, "", err
			}
			r, err := apiutil.RESTClientForGVK(gvk, true, false, config, codecs, httpc)
			return r, m.Resource.Resource, err
		}}
	}
	return rc, nil
}

// Create stores obj; a record kind's is not read back (recordsClient).
func (c *recordsClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	k := c.kinds[gvk]
	if err != nil || k == nil || len(opts) > 0 {
		return c.Client.Create(ctx, obj, opts...)
	}
	rc, resource, err := k.get()
	if err != nil {
		return fmt.Errorf("the REST client of %s: %w", gvk.Kind, err)
	}
	return rc.Post().Namespace(obj.GetNamespace()).Resource(resource).Body(obj).Do(ctx).Error()
}

// List is the cache's List, or, for the routes' List by an indexed field
// (indexedQuery), the informer's index (indexedLists).
func (c *recordsClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if field, value, ok := indexedQuery(opts); ok && c.indexed != nil {
		if done, err := c.indexed.list(ctx, list, field, value); done {
			return err
		}
	}
	return c.Client.List(ctx, list, opts...)
}

// RecordsHTTPClient is the HTTP client the webhook's record creates go
// over (recordsHTTPClient): the Notion benchmark's row b sends bare
// creates over it, to set the routes beside the transport they use.
func RecordsHTTPClient(config *rest.Config) (*http.Client, error) {
	return recordsHTTPClient(config, recordConns)
}

// recordConns is how many record creates the webhook sends at once, and
// so how many HTTP/1.1 connections they hold to the API server at most;
// a create beyond waits for one to end, or for its request's context.
const recordConns = 64

// recordsHTTPClient is the HTTP client of the record creates: config's,
// but on HTTP/1.1, at most limit requests at once. A route's creates are
// many small independent requests at once (every event a person's
// automation sends); over HTTP/2 they would share the one connection the
// rest of the client uses, and each cost the API server more: in the
// Notion benchmark (hack/bench -suite notion, its row b) bare creates over
// HTTP/1.1 ran 0.97–1.22 times as many a second as over HTTP/2 in the
// same run (median 1.08; three runs at 1, 16 and 64 clients).
// client-go offers HTTP/2 only if NextProtos allows it.
//
// Every connection the limit lets it open is kept once idle: client-go's
// transport keeps 25, so each burst of more than 25 creates at once
// closed the rest after it and the next opened them again, each with a
// TLS handshake the API server pays for (in the Notion benchmark at 64
// clients, about 350 new connections in 15 s; with them kept, the 64).
func recordsHTTPClient(config *rest.Config, limit int) (*http.Client, error) {
	cfg := rest.CopyConfig(config)
	cfg.NextProtos = []string{"http/1.1"}
	slots := make(chan struct{}, limit)
	wrap := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		keepIdle(rt, limit)
		if wrap != nil {
			rt = wrap(rt)
		}
		return &boundedTransport{next: rt, slots: slots}
	}
	return rest.HTTPClientFor(cfg)
}

// keepIdle lets the *http.Transport under rt's wrappers keep n idle
// connections. It is client-go's transport of this TLS config and these
// NextProtos, which no other client of the webhook's asks for (a larger
// pool would do no harm to one that did); when it rotates its CA it
// clones the transport, and the clone keeps the setting.
func keepIdle(rt http.RoundTripper, n int) {
	if t := transportUnder(rt); t != nil {
		t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, n)
	}
}

// transportUnder is the *http.Transport rt is or wraps
// (utilnet.RoundTripperWrapper, as client-go's wrappers and
// boundedTransport are), or nil.
func transportUnder(rt http.RoundTripper) *http.Transport {
	for rt != nil {
		if t, ok := rt.(*http.Transport); ok {
			return t
		}
		w, ok := rt.(utilnet.RoundTripperWrapper)
		if !ok {
			return nil
		}
		rt = w.WrappedRoundTripper()
	}
	return nil
}

// boundedTransport sends at most cap(slots) requests at once: a request
// holds a slot from its send until its answer's body is closed (its
// connection is free again then), or until it fails.
type boundedTransport struct {
	next  http.RoundTripper
	slots chan struct{}
}

// WrappedRoundTripper is the transport under t.
func (t *boundedTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// RoundTrip takes a free slot, or waits for one until req's context ends.
func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case t.slots <- struct{}{}:
	default: // every slot is taken: wait, unless the request is already over
		select {
		case t.slots <- struct{}{}:
		case <-req.Context().Done():
			return nil, fmt.Errorf("waiting for one of %d connections to the API server: %w", cap(t.slots), req.Context().Err())
		}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		<-t.slots
		return nil, err
	}
	resp.Body = &slotBody{ReadCloser: resp.Body, release: sync.OnceFunc(func() { <-t.slots })}
	return resp, nil
}

// slotBody is an answer's body that frees its request's slot once closed.
type slotBody struct {
	io.ReadCloser
	release func()
}

// Close closes the body and frees the slot.
func (b *slotBody) Close() error {
	defer b.release()
	return b.ReadCloser.Close()
}

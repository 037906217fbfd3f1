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
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
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
// as it was sent: no resourceVersion, no UID. Every other call is the
// client's own.
type recordsClient struct {
	client.Client
	kinds map[schema.GroupVersionKind]*recordREST
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
	codecs := serializer.NewCodecFactory(opts.Scheme)
	rc := &recordsClient{Client: c, kinds: map[schema.GroupVersionKind]*recordREST{}}
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
			r, err := apiutil.RESTClientForGVK(gvk, true, false, config, codecs, opts.HTTPClient)
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

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

package memory

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/hack/bench/internal/bench"
	"github.com/switchboard-dev/switchboard/hack/internal/local"
	"github.com/switchboard-dev/switchboard/hack/internal/poll"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

// memKind is one kind of the memory benchmark: its list type and how to
// make its i-th object.
type memKind struct {
	name string
	list func() client.ObjectList
	make func(i int) client.Object
}

// memSkipped are the kinds the benchmark makes no objects of, and why.
var memSkipped = map[string]string{
	"NotionSignup": "a handful per cluster, each a public start URL; its integrations are NotionIntegrations, which are here",
}

// memKinds is every kind of v1alpha1.Kinds() with a maker in memMakers,
// its list type from the scheme; a kind with neither a maker nor a reason
// in memSkipped is an error, so a new kind is not left out unnoticed.
func memKinds() ([]memKind, error) {
	scheme := setup.Scheme() // built once: list() runs at every poll
	var kinds []memKind
	for _, name := range v1alpha1.Kinds() {
		mk, ok := memMakers[name]
		if !ok {
			if _, skipped := memSkipped[name]; skipped {
				continue
			}
			return nil, fmt.Errorf("the memory benchmark has no maker for %s (declare one with maker in a file of hack/bench/memory) and no reason to skip it (memSkipped)", name)
		}
		gvk := v1alpha1.GroupVersion.WithKind(name + "List")
		if _, err := scheme.New(gvk); err != nil {
			return nil, err
		}
		kinds = append(kinds, memKind{name: name, make: mk, list: func() client.ObjectList {
			l, _ := scheme.New(gvk)
			return l.(client.ObjectList)
		}})
	}
	return kinds, nil
}

// maker adds kind's maker, and the Secrets a person would create for its
// objects (by name, in the benchmark's namespace), from a file of its
// own: a new kind's file in this package is its whole registration here.
func maker(kind string, make func(i int) client.Object, secrets map[string]map[string][]byte) bool { //nolint:unparam // its result lets a file declare a maker as var _ = maker(…), without an init function
	memMakers[kind] = make
	maps.Copy(memSecrets, secrets)
	return true
}

// memSecrets are the Secrets the kinds of maker need besides memFixtures'.
var memSecrets = map[string]map[string][]byte{}

// memMakers make the i-th object of each kind (maker adds one).
var memMakers = map[string]func(i int) client.Object{}

// The kinds' makers, each with the Secrets only its objects name (the
// shared ones are memFixtures').
var (
	_ = maker("SlideStock", func(i int) client.Object {
		s := &v1alpha1.SlideStock{ObjectMeta: memMeta("deck", i)}
		s.Spec.URL = bench.DeckURL
		return s
	}, nil)
	_ = maker("NotionIntegration", func(i int) client.Object {
		n := &v1alpha1.NotionIntegration{ObjectMeta: memMeta("ni", i)}
		n.Spec.OAuth.ClientSecretRef.Name = "notion-client"
		n.Spec.OAuth.TokenSecretRef.Name = memName("notion-token", i)
		n.Spec.WebhookSecretRef.Name = "notion-webhook"
		return n
	}, map[string]map[string][]byte{"notion-webhook": {"token": []byte("mem-notion-webhook-token-0123456789")}})
	_ = maker("PaperSync", func(i int) client.Object {
		p := &v1alpha1.PaperSync{ObjectMeta: memMeta("ps", i)}
		p.Spec.IntegrationRef.Name = memName("ni", i)
		p.Spec.PageID = fmt.Sprintf("1c2d3e4f-5a6b-4c7d-8e9f-%012d", i)
		p.Spec.Link = "https://arxiv.org/abs/2301.12345v2"
		p.Spec.ArxivID = "2301.12345"
		return p
	}, nil)
	_ = maker("CalendarWatch", func(i int) client.Object {
		w := &v1alpha1.CalendarWatch{ObjectMeta: memMeta("cw", i)}
		w.Spec.CalendarID = bench.CalendarName(i)
		w.Spec.OAuth.ClientSecretRef.Name = "google-client"
		w.Spec.OAuth.TokenSecretRef.Name = memName("calendar-token", i)
		w.Spec.Sink.Objects = &v1alpha1.ObjectSink{APIVersion: "v1", Kind: "ConfigMap"}
		return w
	}, nil)
	_ = maker("SheetConnection", func(i int) client.Object {
		sc := &v1alpha1.SheetConnection{ObjectMeta: memMeta("sc", i)}
		sc.Spec.SpreadsheetID = bench.SheetsID
		sc.Spec.Sheet.Title = bench.SheetsTab
		sc.Spec.OAuth.ClientSecretRef.Name = "google-client"
		sc.Spec.OAuth.TokenSecretRef.Name = memName("sheet-token", i)
		sc.Spec.IngestTokenSecretRef.Name = "sheet-ingest"
		sc.Spec.ColumnMapping = map[string]v1alpha1.ColumnRef{"title": "A", "startedAt": "B", "endedAt": "C", "durationSeconds": "D", "id": "E"}
		return sc
	}, map[string]map[string][]byte{"sheet-ingest": {"token": []byte(testenv.SheetIngestToken)}})
	_ = maker("SheetSync", func(i int) client.Object {
		s := &v1alpha1.SheetSync{ObjectMeta: memMeta("ss", i)}
		s.Spec.ConnectionRef.Name = memName("sc", i)
		s.Spec.Session = bench.Session("mem", i)
		return s
	}, nil)
	_ = maker("ReceiveLink", func(i int) client.Object {
		l := &v1alpha1.ReceiveLink{ObjectMeta: memMeta("rl", i)}
		l.Spec.Blob = v1alpha1.BlobLocation{Bucket: memBucket, Key: memBlobKey(i), CredentialsSecretRef: v1alpha1.SecretReference{Name: "s3"}}
		l.Spec.TTL = &metav1.Duration{Duration: 168 * time.Hour}
		return l
	}, nil)
)

func memName(prefix string, i int) string { return fmt.Sprintf("%s-%05d", prefix, i) }

func memBlobKey(i int) string { return fmt.Sprintf("mem/%05d.bin", i) }

func memMeta(prefix string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: memName(prefix, i), Namespace: memNS}
}

// memFixtures creates the namespaces and the Secrets a person creates: the
// OAuth clients and webhook/ingest tokens shared by every parent, and the
// storage credentials.
func memFixtures(ctx context.Context, c client.Client, s3 *testenv.S3) error {
	for _, ns := range []string{memNS, memStateNS} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	secrets := map[string]map[string][]byte{
		"notion-client": {"client_id": []byte("mem-client"), "client_secret": []byte("mem-secret")},
		"google-client": {"client_id": []byte("mem-client"), "client_secret": []byte("mem-secret")},
		"s3":            s3.Credentials.SecretData(),
	}
	maps.Copy(secrets, memSecrets)
	for name, data := range secrets {
		if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: memNS}, Data: data}); err != nil {
			return err
		}
	}
	return nil
}

// memCreate brings every kind from have to n objects (16 clients), the
// links' blobs uploaded first.
func memCreate(ctx context.Context, c client.Client, s3 *testenv.S3, kinds []memKind, have, n int) error {
	if err := bench.Parallel(n-have, 16, func(i int) error {
		key := memBlobKey(have + i)
		return s3.Blob.Put(ctx, s3.Object(memBucket, key), []byte(key), "application/octet-stream")
	}); err != nil {
		return fmt.Errorf("upload blobs: %w", err)
	}
	return bench.Parallel((n-have)*len(kinds), 16, func(j int) error {
		// Round the kinds, so that every controller has work from the start.
		k, i := kinds[j%len(kinds)], have+j/len(kinds)
		if err := c.Create(ctx, k.make(i)); err != nil {
			return fmt.Errorf("create %s %d: %w", k.name, i, err)
		}
		return nil
	})
}

// memSettled waits until each of the n objects of every kind has its
// first status from the controller (conditions written), counting from
// the bench's own informers (watch events; listing 70,000 objects from
// the API server every poll would be most of its load), and fails if a
// binary exits.
func memSettled(ctx context.Context, objs cache.Cache, p memProcs, kinds []memKind, n int, settle time.Duration) error {
	waiting := map[string]int{}
	return poll.Until(ctx, "", 2*time.Second, settle, func() (bool, error) {
		for _, proc := range []*local.Process{p.manager, p.webhook} {
			if proc.Exited() {
				return false, poll.Stop(fmt.Errorf("a binary exited (log %s): %w", proc.Log, proc.Err()))
			}
		}
		done := true
		for _, k := range kinds {
			have, err := memReconciled(ctx, objs, k)
			if err != nil {
				return false, poll.Stop(err)
			}
			waiting[k.name] = n - have
			done = done && have == n
		}
		return done, fmt.Errorf("objects not reconciled yet: %v", waiting)
	})
}

// memReconciled counts kind k's objects whose status has conditions.
func memReconciled(ctx context.Context, objs cache.Cache, k memKind) (int, error) {
	list := k.list()
	if err := objs.List(ctx, list, client.InNamespace(memNS), client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	count := 0
	err := meta.EachListItem(list, func(obj runtime.Object) error {
		if so, ok := obj.(v1alpha1.StatusObject); ok && len(so.GetReconcileStatus().Conditions) > 0 {
			count++
		}
		return nil
	})
	return count, err
}

// memCache starts an informer cache of the benchmark's namespace for
// every kind, and waits until it has synced.
func memCache(ctx context.Context, cfg *rest.Config, kinds []memKind) (cache.Cache, error) {
	objs, err := cache.New(cfg, cache.Options{Scheme: setup.Scheme(), DefaultNamespaces: map[string]cache.Config{memNS: {}},
		DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if _, err := objs.GetInformer(ctx, k.make(0)); err != nil {
			return nil, err
		}
	}
	go func() { _ = objs.Start(ctx) }()
	if !objs.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the benchmark's cache did not sync")
	}
	return objs, nil
}

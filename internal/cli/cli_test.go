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

package cli_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
	"github.com/switchboard-dev/switchboard/internal/cli"
	"github.com/switchboard-dev/switchboard/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// patience bounds every wait for something that should happen: generous,
// since this machine may be busy.
const patience = 2 * time.Minute

// result is one run of the plugin.
type result struct {
	stdout, stderr string
	code           int
}

// plugin runs the plugin in-process, through its cobra root, against the
// test's API server with namespace ns (none when empty).
func plugin(t *testing.T, opts cli.Options, ns string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	opts.IOStreams = genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	flags := []string{"--kubeconfig", testenv.Kubeconfig(t, env.Config)}
	if ns != "" {
		flags = append(flags, "-n", ns)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	code := cli.Main(ctx, append(args, flags...), opts)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// run is plugin with the default options.
func run(t *testing.T, ns string, args ...string) result {
	t.Helper()
	return plugin(t, cli.Options{}, ns, args...)
}

// ok fails the test unless r succeeded.
func (r result) ok(t *testing.T) result {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	return r
}

// fails fails the test unless r failed with every want in its standard
// error.
func (r result) fails(t *testing.T, want ...string) result {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("exit 0, want a failure\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("standard error lacks %q:\n%s", w, r.stderr)
		}
	}
	return r
}

func namespace(t *testing.T) string {
	t.Helper()
	ns, err := env.Namespace("cli")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// create makes an object of kind named name in ns from the repository's
// sample, after edit.
func create[T client.Object](t *testing.T, ns, name string, obj T, edit ...func(T)) T {
	t.Helper()
	u := testenv.Sample(t, kindOf(t, obj))
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ns)
	obj.SetName(name)
	for _, e := range edit {
		e(obj)
	}
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func kindOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	gvks, _, err := env.Scheme.ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	return gvks[0].Kind
}

// setStatus writes obj's status after mutate, as its controller would.
func setStatus[T interface {
	client.Object
	v1alpha1.StatusObject
}](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	mutate(obj)
	if err := env.Client.Status().Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

// condition sets one condition of st.
func condition(st *v1alpha1.ReconcileStatus, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message})
}

// ready is the status of an object its controller took to Ready.
func ready(message string) func(*v1alpha1.ReconcileStatus, int64) {
	return func(st *v1alpha1.ReconcileStatus, gen int64) {
		st.ObservedGeneration = gen
		condition(st, v1alpha1.ReadyCondition, metav1.ConditionTrue, v1alpha1.SucceededReason, message)
	}
}

// controller plays obj's controller, since no manager runs here: it
// watches obj until it carries a requested-at value, then writes each
// step's status in turn, with that value acknowledged. The channel
// closes when it is done.
func controller[T interface {
	client.Object
	v1alpha1.StatusObject
}](t *testing.T, obj T, list client.ObjectList, steps ...func(*v1alpha1.ReconcileStatus, int64)) <-chan struct{} {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	w, err := wc.Watch(ctx, list, &client.ListOptions{
		Namespace:     obj.GetNamespace(),
		FieldSelector: fields.OneTermEqualSelector("metadata.name", obj.GetName()),
		Raw:           &metav1.ListOptions{ResourceVersion: obj.GetResourceVersion()},
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		defer w.Stop()
		value := ""
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified {
				continue
			}
			if v := ev.Object.(client.Object).GetAnnotations()[v1alpha1.RequestedAtAnnotation]; v != "" {
				value = v
				break
			}
		}
		if value == "" {
			t.Errorf("the controller saw no %s annotation on %s", v1alpha1.RequestedAtAnnotation, obj.GetName())
			return
		}
		for _, step := range steps {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				t.Errorf("controller: %v", err)
				return
			}
			st := obj.GetReconcileStatus()
			st.LastHandledRequestedAt = value
			step(st, obj.GetGeneration())
			if err := env.Client.Status().Update(ctx, obj); err != nil {
				t.Errorf("controller: %v", err)
				return
			}
		}
	}()
	return done
}

// lines are the non-empty lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// row finds the table row whose first fields are prefix, or fails.
func row(t *testing.T, table string, prefix ...string) []string {
	t.Helper()
	for _, l := range lines(table) {
		f := strings.Fields(l)
		if len(f) >= len(prefix) && slices.Equal(f[:len(prefix)], prefix) {
			return f
		}
	}
	t.Fatalf("no row starting %v in\n%s", prefix, table)
	return nil
}

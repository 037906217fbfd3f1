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

package children

import (
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/switchboard-dev/switchboard/api/v1alpha1"
)

// What the Batcher reads of a child is the child status every child kind
// shares (v1alpha1.ChildObject); what it makes of a kind (an empty
// parent, a list of children) it makes from the Go type and the client's
// scheme, so that a kind names none of it.

// newObject is an empty object of kind T, a pointer to a struct.
func newObject[T client.Object]() T {
	var zero T
	return reflect.New(reflect.TypeOf(zero).Elem()).Interface().(T)
}

// newList is an empty list of C, as the client's scheme makes it (the
// kind's List type, registered with the kind).
func (b *Batcher[C, P]) newList() (client.ObjectList, error) {
	s := b.Client.Scheme()
	gvk, err := apiutil.GVKForObject(newObject[C](), s)
	if err != nil {
		return nil, err
	}
	o, err := s.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	list, ok := o.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", gvk.Kind+"List")
	}
	return list, nil
}

// copyStatus sets dst's status to a copy of src's: the whole status, the
// kind's own fields with the shared ones (every kind keeps it in its
// field Status).
func copyStatus[C client.Object](dst, src C) {
	st := reflect.ValueOf(src.DeepCopyObject()).Elem().FieldByName("Status")
	reflect.ValueOf(dst).Elem().FieldByName("Status").Set(st)
}

// finished is when c finished (status.completedAt), or nil.
func finished(c v1alpha1.ChildObject) *metav1.Time {
	return c.GetChildStatus().CompletedAt
}

// notBefore is when c may be tried again (status.nextAttemptAt; zero:
// now), whatever its batch mates are doing.
func notBefore(c v1alpha1.ChildObject) time.Time {
	if at := c.GetChildStatus().NextAttemptAt; at != nil {
		return at.Time
	}
	return time.Time{}
}

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

package testenv

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Backup is a set of objects as a backup tool holds them, to be restored
// the way Velero restores a cluster (issue 35): the objects are deleted
// without their finalizers running (the old cluster is gone; nothing of
// it reacts), then created again with a new UID, without status (the API
// server drops it on create when the status subresource is on) and
// without owner references, Secrets and ConfigMaps first (Velero's
// restore order puts them before custom resources).
type Backup struct {
	c    client.Client
	objs []client.Object
}

// TakeBackup reads objs as they are now. Each must name an existing
// object (name and namespace set); its type says what to read.
func TakeBackup(ctx context.Context, c client.Client, objs ...client.Object) (*Backup, error) {
	b := &Backup{c: c}
	for _, o := range objs {
		cp, ok := o.DeepCopyObject().(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T is not a client.Object", o)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), cp); err != nil {
			return nil, fmt.Errorf("back up %T %s: %w", o, client.ObjectKeyFromObject(o), err)
		}
		b.objs = append(b.objs, cp)
	}
	return b, nil
}

// TakeNamespaceBackup reads what a backup of namespace ns holds for the
// tests: every Secret of it, every object of each list's kind in it, and
// extra (objects elsewhere, such as the webhook's own Secrets).
func TakeNamespaceBackup(ctx context.Context, c client.Client, ns string, extra []client.Object, lists ...client.ObjectList) (*Backup, error) {
	objs := []client.Object{}
	for _, list := range append([]client.ObjectList{&corev1.SecretList{}}, lists...) {
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			o, ok := item.(client.Object)
			if !ok {
				return nil, fmt.Errorf("%T is not a client.Object", item)
			}
			objs = append(objs, o)
		}
	}
	return TakeBackup(ctx, c, append(objs, extra...)...)
}

// Replay is Lose then Restore: the cluster lost and restored from the
// backup while whatever runs keeps running.
func (b *Backup) Replay(ctx context.Context, timeout time.Duration) error {
	if err := b.Lose(ctx, timeout); err != nil {
		return err
	}
	return b.Restore(ctx)
}

// Lose deletes every backed-up object as losing the cluster would: their
// finalizers are removed first, so no controller's cleanup runs, and Lose
// returns when the API server no longer has them.
func (b *Backup) Lose(ctx context.Context, timeout time.Duration) error {
	for _, o := range b.objs {
		live, _ := o.DeepCopyObject().(client.Object)
		if err := b.c.Get(ctx, client.ObjectKeyFromObject(o), live); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return err
		}
		if len(live.GetFinalizers()) > 0 {
			live.SetFinalizers(nil)
			if err := b.c.Update(ctx, live); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("drop the finalizers of %s: %w", client.ObjectKeyFromObject(o), err)
			}
		}
		if err := b.c.Delete(ctx, live); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", client.ObjectKeyFromObject(o), err)
		}
	}
	return b.waitGone(ctx, timeout)
}

func (b *Backup) waitGone(ctx context.Context, timeout time.Duration) error {
	for _, o := range b.objs {
		probe, _ := o.DeepCopyObject().(client.Object)
		last, ok := Poll(timeout, PollInterval, func() (bool, string) {
			err := b.c.Get(ctx, client.ObjectKeyFromObject(o), probe)
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		if !ok {
			return fmt.Errorf("%T %s still there after %s: %s", o, client.ObjectKeyFromObject(o), timeout, last)
		}
	}
	return nil
}

// Restore creates every backed-up object again as a restore tool does:
// Secrets and ConfigMaps first, then the rest in the order they were
// backed up; each with its labels, annotations, finalizers, spec and
// data, and without UID, resource version, owner references or status.
func (b *Backup) Restore(ctx context.Context) error {
	first := func(o client.Object) bool {
		switch o.(type) {
		case *corev1.Secret, *corev1.ConfigMap:
			return true
		}
		return false
	}
	for _, pass := range []bool{true, false} {
		for _, o := range b.objs {
			if first(o) != pass {
				continue
			}
			if err := b.c.Create(ctx, Restored(o)); err != nil {
				return fmt.Errorf("restore %T %s: %w", o, client.ObjectKeyFromObject(o), err)
			}
		}
	}
	return nil
}

// Restored is o as a restore creates it: what the backup holds of its
// metadata (name, namespace, labels, annotations, finalizers), none of
// what the old cluster gave it (UID, resource version, creation time,
// generation, managed fields, owner references). Its status goes along
// with the create and the API server drops it.
func Restored(o client.Object) client.Object {
	cp, _ := o.DeepCopyObject().(client.Object)
	cp.SetUID("")
	cp.SetResourceVersion("")
	cp.SetCreationTimestamp(metav1.Time{})
	cp.SetGeneration(0)
	cp.SetManagedFields(nil)
	cp.SetOwnerReferences(nil)
	cp.SetDeletionTimestamp(nil)
	cp.SetDeletionGracePeriodSeconds(nil)
	return cp
}

// Reapply is a GitOps tool's delete and apply of one object kept in Git:
// the live object is deleted (its finalizers run: the operator sees the
// deletion) and, once gone, manifest — what Git holds: the object as the
// person wrote it — is created again.
func Reapply(ctx context.Context, c client.Client, manifest client.Object, timeout time.Duration) error {
	live, _ := manifest.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(manifest), live); err != nil {
		return err
	}
	if err := c.Delete(ctx, live); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	last, ok := Poll(timeout, PollInterval, func() (bool, string) {
		err := c.Get(ctx, client.ObjectKeyFromObject(manifest), live)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if !ok {
		return fmt.Errorf("%s still there after %s: %s", client.ObjectKeyFromObject(manifest), timeout, last)
	}
	return c.Create(ctx, Restored(manifest))
}

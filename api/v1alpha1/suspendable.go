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

package v1alpha1

// Suspendable is a kind whose spec.suspend stops its controller
// (NotionIntegration, CalendarWatch, SheetConnection, SlideStock): the
// runner reads spec.suspend through it, and tools that suspend and resume
// objects, such as `kubectl switchboard suspend`, find the kinds that can
// be suspended through it rather than a list of their own.
// +kubebuilder:object:generate=false
type Suspendable interface {
	StatusObject
	// IsSuspended reports spec.suspend.
	IsSuspended() bool
}

var (
	_ Suspendable = (*NotionIntegration)(nil)
	_ Suspendable = (*CalendarWatch)(nil)
	_ Suspendable = (*SheetConnection)(nil)
	_ Suspendable = (*SlideStock)(nil)
)

// IsSuspended implements Suspendable.
func (in *NotionIntegration) IsSuspended() bool { return in.Spec.Suspend }

// IsSuspended implements Suspendable.
func (in *CalendarWatch) IsSuspended() bool { return in.Spec.Suspend }

// IsSuspended implements Suspendable.
func (in *SheetConnection) IsSuspended() bool { return in.Spec.Suspend }

// IsSuspended implements Suspendable.
func (in *SlideStock) IsSuspended() bool { return in.Spec.Suspend }

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

// RoutedObject is a kind the webhook server finds by the path an inbound
// request came in on: its controller publishes in status the secret-derived
// paths it listens on, and the webhook's RoutePaths cache index (registered
// on every kind of the API that implements this) maps a path to its object
// in memory. A kind with a route implements it and needs no index of its
// own.
// +kubebuilder:object:generate=false
type RoutedObject interface {
	StatusObject
	// GetRoutePaths are the request paths the object listens on (empty
	// ones are not indexed).
	GetRoutePaths() []string
}

// GetRoutePaths implements RoutedObject: the Automation's secret path and
// the public integration's connection-webhook path.
func (in *NotionIntegration) GetRoutePaths() []string {
	return []string{in.Status.WebhookPath, in.Status.EventsPath}
}

// GetRoutePaths implements RoutedObject: the ingest path.
func (in *SheetConnection) GetRoutePaths() []string { return []string{in.Status.IngestPath} }

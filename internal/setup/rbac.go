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

// The manager's permissions, generated into config/rbac/role.yaml.
//
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations;papersyncs;slidestocks;calendarwatches;receivelinks;sheetconnections;sheetsyncs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations/status;papersyncs/status;slidestocks/status;calendarwatches/status;receivelinks/status;sheetconnections/status;sheetsyncs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=switchboard.dev,resources=notionintegrations/finalizers;papersyncs/finalizers;slidestocks/finalizers;calendarwatches/finalizers;receivelinks/finalizers;sheetconnections/finalizers;sheetsyncs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

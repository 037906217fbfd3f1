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

// Package controller is the list of every kind's controller: the manager runs
// it, and the suites that run the whole operator build theirs from it, so
// a new kind is one line here and no test that is not its own.
package controller

import (
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/notionsignup"
	"github.com/switchboard-dev/switchboard/internal/controller/papersync"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/controller/slidestock"
	"github.com/switchboard-dev/switchboard/internal/reconcile/wire"
)

// All is every controller, one line a kind, with linkNamespace for the
// ReceiveLink controller's short-token objects (its --link-namespace
// default). A child kind's controller posts to its parent's mailbox, so
// the two share it.
func All(linkNamespace string) []wire.Kind {
	notion, sheets := &notionintegration.Reports{}, &sheetconnection.Reports{}
	return []wire.Kind{
		&slidestock.Controller{},
		&notionintegration.Controller{Reports: notion},
		&notionsignup.Controller{},
		&papersync.Controller{Integrations: notion},
		&calendarwatch.Controller{},
		&receivelink.Controller{Namespace: linkNamespace},
		&sheetconnection.Controller{Reports: sheets},
		&sheetsync.Controller{Connections: sheets},
	}
}

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
	"flag"
	"fmt"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Why the logger needs a filter, traced through the sources of client-go
// v0.37 and klog v2.140:
//
//   - rest.Request (client-go rest/request.go, logBody) logs every API
//     request and response body as "Request Body" / "Response Body" with the
//     key "body" whenever its logger has V(8) enabled: 1 KiB of it at V(8),
//     10 KiB at V(9), all of it at V(10). A Secret's body holds its data
//     (base64 in responses, plain text in a stringData request).
//   - That logger is klog.FromContext(ctx). klog's contextual logging is on
//     by default, so it is the logr.Logger in the request's context, and
//     controller-runtime puts its own logger there: the reconcile context
//     (internal/controller reconcileHandler), the manager's and the
//     informers' contexts. The webhook server puts its logger in each
//     request's context. Without a logger in the context it is klog's
//     global logger, which InitLogging also points here.
//   - So `--zap-log-level=8` or more writes token Secrets, the OAuth client
//     secret and every other Secret the binaries read or write to the log.
//
// client-go's other dump, the debugging round tripper (transport
// DebugWrappers), is installed only when klog's own -v is 6 or more when a
// client is built; neither binary exposes klog's flags, so it stays off, and
// it logs URLs and masked headers, never bodies.
//
// Turning klog's contextual logging off would also hide the bodies, but it
// would also send every Kubernetes library's log lines past the logger the
// operator configured. Redacting the one key keeps every other debug line
// (the body's size is kept, which is what an on-call engineer needs).

// redactedKeys are the log keys whose values are replaced before a line is
// written. "body" is the key client-go's rest.Request logs bodies under; no
// Switchboard code logs a body either.
var redactedKeys = map[string]bool{"body": true}

// Redacted marks a value the logger withheld.
const Redacted = "[redacted]"

// BindLogFlags registers the --zap-* flags of both binaries into opts,
// with one default of our own: stack traces only from panic level
// (--zap-stacktrace-level=panic), where controller-runtime's is error. A
// failed reconcile is logged at error level once per new reason; its
// stack is always the runner's, never the cause's, and on-call reads one
// line for it rather than thirty. --zap-stacktrace-level=error brings
// them back.
func BindLogFlags(opts *zap.Options, fs *flag.FlagSet) {
	if opts.StacktraceLevel == nil {
		opts.StacktraceLevel = zapcore.PanicLevel
	}
	opts.BindFlags(fs)
}

// NewLogger builds the zap logger the --zap-* flags describe, with API
// request and response bodies redacted at every verbosity.
func NewLogger(opts *zap.Options) logr.Logger {
	return Redact(zap.New(zap.UseFlagOptions(opts)))
}

// InitLogging builds the logger (NewLogger) and makes it the logger of
// controller-runtime and of klog, so that every Kubernetes library logs
// through the same filter and format. Both binaries call it once, first.
func InitLogging(opts *zap.Options) logr.Logger {
	log := NewLogger(opts)
	ctrl.SetLogger(log)
	// ContextualLogger makes klog.Background (what klog.FromContext falls
	// back to when a context carries no logger) this logger too. klog's
	// own verbosity (-v, never set) still gates its non-contextual calls.
	klog.SetLoggerWithOptions(log, klog.ContextualLogger(true))
	return log
}

// Redact wraps a logger so that the values of redactedKeys never reach it,
// whatever its verbosity.
func Redact(log logr.Logger) logr.Logger {
	sink := log.GetSink()
	if sink == nil {
		return log
	}
	// The wrapper adds one frame between logr.Logger and the sink; tell the
	// sink so that it still reports the caller's file and line.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return logr.New(redactingSink{sink: sink})
}

// redactingSink is a logr.LogSink that replaces redacted values, then
// passes everything to the wrapped sink.
type redactingSink struct {
	sink logr.LogSink
}

var (
	_ logr.LogSink          = redactingSink{}
	_ logr.CallDepthLogSink = redactingSink{}
)

// Init does nothing: the wrapped sink was initialised by the logr.Logger it
// came from, and Redact accounts for the extra frame.
func (redactingSink) Init(logr.RuntimeInfo) {}

func (s redactingSink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s redactingSink) Info(level int, msg string, kv ...any) {
	s.sink.Info(level, msg, redact(kv)...)
}

func (s redactingSink) Error(err error, msg string, kv ...any) {
	s.sink.Error(err, msg, redact(kv)...)
}

func (s redactingSink) WithValues(kv ...any) logr.LogSink {
	return redactingSink{sink: s.sink.WithValues(redact(kv)...)}
}

func (s redactingSink) WithName(name string) logr.LogSink {
	return redactingSink{sink: s.sink.WithName(name)}
}

func (s redactingSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return redactingSink{sink: cd.WithCallDepth(depth)}
	}
	return s
}

// redact returns kv with the values of redactedKeys replaced by Redacted
// and their size; it copies kv only when it has something to replace.
func redact(kv []any) []any {
	var out []any
	for i := 0; i+1 < len(kv); i += 2 {
		key, ok := kv[i].(string)
		if !ok || !redactedKeys[key] {
			continue
		}
		if out == nil {
			out = append([]any(nil), kv...)
		}
		switch v := kv[i+1].(type) {
		case string:
			out[i+1] = fmt.Sprintf("%s %d bytes", Redacted, len(v))
		case []byte:
			out[i+1] = fmt.Sprintf("%s %d bytes", Redacted, len(v))
		default:
			out[i+1] = Redacted
		}
	}
	if out == nil {
		return kv
	}
	return out
}

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

package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/switchboard-dev/switchboard/internal/pages"
	"github.com/switchboard-dev/switchboard/internal/setup"
	"github.com/switchboard-dev/switchboard/internal/upstream"
	"github.com/switchboard-dev/switchboard/internal/webhook"
)

// options are the command's flags.
type options struct {
	server                         webhook.Options
	publicURL, stateNamespace      string
	links                          linksConfig
	discordClient, watchNamespaces string
	upstreams                      *upstream.Set
	kubeAPI                        setup.KubeAPI
	zap                            zap.Options
}

func newOptions() *options { return &options{upstreams: upstream.NewSet()} }

// bindFlags registers the flags on fs.
func (o *options) bindFlags(fs *flag.FlagSet) {
	o.bindServerFlags(fs)
	fs.StringVar(&o.publicURL, "public-url", "", "Externally visible base URL of this server (for OAuth redirect URIs and the webhook URLs shown to people), e.g. https://hooks.example.com.")
	fs.StringVar(&o.stateNamespace, "state-namespace", envOr("POD_NAMESPACE", "default"), "Namespace of the OAuth state Secrets; the default is the pod's namespace, from $POD_NAMESPACE.")
	fs.StringVar(&o.links.namespace, "link-namespace", envOr("POD_NAMESPACE", "default"), "Namespace of the ReceiveLink short-token objects (the manager's --link-namespace).")
	fs.StringVar(&o.links.keys, "link-key-secret", "switchboard-link-keys", "Secret in --link-namespace with the keys of ReceiveLinks naming no encryptionKeySecretRef (the manager's --link-key-secret).")
	fs.StringVar(&o.links.s3Public, "s3-public-endpoint", "", "Base URL of the S3 API as receivers' browsers reach it, for presigned download URLs; default the --upstream s3 URL.")
	fs.DurationVar(&o.links.presignTTL, "presign-ttl", webhook.DefaultPresignTTL, "How long a resolved share link's download URL works (never past the link's expiry).")
	fs.DurationVar(&o.links.auditFlush, "audit-flush-interval", webhook.DefaultAuditFlush, "How often resolve counts are added to ReceiveLinks' status (each resolve's Event is sent at once).")
	fs.StringVar(&o.discordClient, "discord-client-secret", "", "Secret in --state-namespace (NAME, or NAMESPACE/NAME with that namespace) with the Discord application's client_id and client_secret, for receivers' Discord sign-in; empty disables it (links restricted to a Discord user then answer 503).")
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "", "Comma-separated namespaces whose resources the routes serve (the manager's --watch-namespaces); empty serves every namespace.")
	fs.Var(o.upstreams, "upstream", "Base URL of an outside API as NAME=URL (repeatable); the webhook server calls only the OAuth token endpoints.")
	setup.BindKubeAPIFlags(&o.kubeAPI, fs)
	setup.BindLogFlags(&o.zap, fs)
}

// bindServerFlags registers the flags of webhook.Options: listeners,
// limits, timeouts and the rate limit.
func (o *options) bindServerFlags(fs *flag.FlagSet) {
	s := &o.server
	fs.StringVar(&s.Addr, "bind-address", ":9443", "Address of the public listener: GET / and the inbound routes only.")
	fs.StringVar(&s.MetricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus /metrics endpoint binds to, apart from the public listener; 0 disables it.")
	fs.StringVar(&s.ProbeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to, apart from the public listener; 0 disables them.")
	fs.StringVar(&s.PprofAddr, "pprof-bind-address", "", "Address Go's profiling endpoints (/debug/pprof/) bind to, apart from the public listener, for a heap or CPU profile on a live server; empty or 0 disables them. Never expose it outside the pod.")
	fs.Int64Var(&s.MaxBodyBytes, "max-body-bytes", webhook.DefaultMaxBodyBytes, "Largest request body accepted; larger ones get 413.")
	fs.DurationVar(&s.ReadHeaderTimeout, "read-header-timeout", webhook.DefaultReadHeaderTimeout, "Time a client has to send its request headers.")
	fs.DurationVar(&s.ReadTimeout, "read-timeout", webhook.DefaultReadTimeout, "Time a client has to send its whole request.")
	fs.DurationVar(&s.WriteTimeout, "write-timeout", webhook.DefaultWriteTimeout, "Time allowed to write an answer.")
	fs.DurationVar(&s.IdleTimeout, "idle-timeout", webhook.DefaultIdleTimeout, "Time an idle keep-alive connection is kept.")
	fs.DurationVar(&s.ShutdownDelay, "shutdown-delay", webhook.DefaultShutdownDelay, "Time the server keeps serving on SIGTERM, with /readyz failing and every answer closing its connection, before it stops accepting connections: the time the endpoints need to drop the pod.")
	fs.DurationVar(&s.ShutdownTimeout, "shutdown-timeout", webhook.DefaultShutdownTimeout, "Time in-flight requests get to finish on SIGTERM, after --shutdown-delay.")
	fs.Float64Var(&s.RateLimit.Rate, "rate-limit", webhook.DefaultRateLimit, "Requests per second allowed per client address; 0 disables the limit.")
	fs.IntVar(&s.RateLimit.Burst, "rate-limit-burst", webhook.DefaultBurst, "Requests a client may make at once.")
	fs.BoolVar(&s.RateLimit.TrustForwardedFor, "trust-forwarded-for", false, "Key the rate limit by the first X-Forwarded-For address (only behind a proxy that sets it).")
	fs.IntVar(&s.SignUp.PerAddress, "signup-starts-per-address", webhook.DefaultSignUpsPerAddress, "Self-service sign-ups one client address may start an hour (per replica); 0 disables the limit.")
	fs.IntVar(&s.SignUp.Overall, "signup-starts", webhook.DefaultSignUpsOverall, "Self-service sign-ups all addresses together may start an hour (per replica); 0 disables the limit.")
	fs.IntVar(&s.SignUp.Pending, "signup-pending", webhook.DefaultSignUpsPending, "Browsers that may have a self-service sign-up in progress at once, per sign-up; a further one is told to wait.")
	s.Language = pages.En
	fs.Func("language", "Language of the pages a person's browser gets (connect, sign-in, share link) when its Accept-Language names neither served language: en or ja (default en).", func(v string) error {
		l, ok := pages.ParseLang(v)
		if !ok {
			return fmt.Errorf("%q is not a language the pages are written in (en, ja)", v)
		}
		s.Language = l
		return nil
	})
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

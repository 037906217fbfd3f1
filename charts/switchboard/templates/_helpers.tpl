{{/*
Names. fullname is the prefix of every object: the release name, with the
chart's name appended unless the release name already contains it.
*/}}
{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "switchboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "switchboard.labels" -}}
helm.sh/chart: {{ include "switchboard.chart" . }}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: switchboard
{{- end }}

{{/* Selector labels of one component: (dict "ctx" $ "component" "manager"). */}}
{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "switchboard.componentLabels" -}}
{{ include "switchboard.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* ServiceAccount names. */}}
{{- define "switchboard.managerServiceAccount" -}}
{{- if .Values.manager.serviceAccount.create }}
{{- default (printf "%s-manager" (include "switchboard.fullname" .)) .Values.manager.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.manager.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "switchboard.webhookServiceAccount" -}}
{{- if .Values.webhook.serviceAccount.create }}
{{- default (printf "%s-webhook" (include "switchboard.fullname" .)) .Values.webhook.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.webhook.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
The image of one component: (dict "ctx" $ "component" "manager"). A digest
wins over a tag; the tag defaults to the chart's appVersion, so a chart
never renders "latest".
*/}}
{{- define "switchboard.image" -}}
{{- $v := .ctx.Values }}
{{- $c := index $v .component }}
{{- $repo := $c.image.repository | default (printf "%s/%s" $v.image.repository .component) }}
{{- $digest := $c.image.digest | default $v.image.digest }}
{{- if $digest }}
{{- printf "%s@%s" $repo $digest }}
{{- else }}
{{- printf "%s:%s" $repo ($c.image.tag | default $v.image.tag | default .ctx.Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The webhook's public URL: publicURL, else https://<ingress host>. */}}
{{- define "switchboard.publicURL" -}}
{{- if .Values.publicURL }}
{{- .Values.publicURL }}
{{- else if and .Values.webhook.ingress.enabled .Values.webhook.ingress.host }}
{{- printf "https://%s" .Values.webhook.ingress.host }}
{{- end }}
{{- end }}

{{/* Arguments both binaries take. */}}
{{- define "switchboard.commonArgs" -}}
- --metrics-bind-address=:{{ .Values.metrics.port }}
- --health-probe-bind-address=:{{ .Values.probes.port }}
{{- with (include "switchboard.publicURL" .) }}
- --public-url={{ . }}
{{- end }}
- --state-namespace={{ .Values.stateNamespace | default .Release.Namespace }}
- --link-namespace={{ .Values.linkNamespace | default .Release.Namespace }}
- --link-key-secret={{ .Values.linkKeySecret }}
{{- with .Values.watchNamespaces }}
- --watch-namespaces={{ join "," . }}
{{- end }}
{{- range $name, $url := .Values.upstreams }}
- --upstream={{ $name }}={{ $url }}
{{- end }}
- --zap-log-level={{ .Values.log.level }}
- --zap-encoder={{ .Values.log.encoder }}
{{- end }}

{{/* Environment both binaries read: the pod's namespace. */}}
{{- define "switchboard.env" -}}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}

{{/*
topologySpreadConstraints with the component's selector filled in where
the user gave none: (dict "ctx" $ "component" "webhook" "constraints" list).
*/}}
{{- define "switchboard.topologySpread" -}}
{{- $sel := include "switchboard.selectorLabels" (dict "ctx" .ctx "component" .component) | fromYaml }}
{{- $out := list }}
{{- range .constraints }}
{{- $c := deepCopy . }}
{{- if not (hasKey $c "labelSelector") }}
{{- $_ := set $c "labelSelector" (dict "matchLabels" $sel) }}
{{- end }}
{{- $out = append $out $c }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/* Annotations of every CRD. */}}
{{- define "switchboard.crdAnnotations" -}}
{{- if .Values.crds.keep -}}
helm.sh/resource-policy: keep
{{- end }}
{{- end }}

{{/* The upstream ports (from the upstream URLs; 443 for the defaults). */}}
{{- define "switchboard.upstreamPorts" -}}
{{- $ports := list 443 }}
{{- range $name, $raw := .Values.upstreams }}
{{- $u := urlParse $raw }}
{{- $hostport := splitList ":" $u.host }}
{{- if gt (len $hostport) 1 }}
{{- $ports = append $ports (last $hostport | int) }}
{{- else if eq $u.scheme "http" }}
{{- $ports = append $ports 80 }}
{{- end }}
{{- end }}
{{- toYaml (uniq $ports) }}
{{- end }}

{{- /* The webhook's rights in the link namespace, when it is not the state
namespace: it reads the short-token objects and link keys the manager
writes there, and writes nothing. */}}
{{- define "switchboard.webhookLinkRules" }}
- apiGroups:
  - ""
  resources:
  - secrets
  verbs:
  - get
  - list
  - watch
{{- end }}

{{/*
The manager's components: "manager", then "manager-<key>" for each key of
manager.shards, as a JSON list (fromJsonArray).
*/}}
{{- define "switchboard.managerComponents" -}}
{{- $c := list "manager" }}
{{- range .Values.manager.shards }}
{{- $c = append $c (printf "manager-%s" .) }}
{{- end }}
{{- toJson $c }}
{{- end }}

{{/*
A manager's sharding flags: a shard's selector and Lease; the main
manager's selector leaves it every object no shard takes.
*/}}
{{- define "switchboard.shardArgs" -}}
{{- $shards := .ctx.Values.manager.shards }}
{{- if ne .component "manager" }}
{{- $key := trimPrefix "manager-" .component }}
- {{ printf "--watch-label-selector=sharding.switchboard.dev/key in (%s)" $key | quote }}
- --leader-election-id=manager.switchboard.dev-{{ $key }}
{{- else if $shards }}
- {{ printf "--watch-label-selector=sharding.switchboard.dev/key notin (%s)" (join "," $shards) | quote }}
{{- end }}
{{- end }}

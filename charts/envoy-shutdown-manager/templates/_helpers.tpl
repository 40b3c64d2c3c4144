{{/*
Names, labels and the values every template derives from the same source: the timeout chain,
the admin address in both spellings (Envoy's bootstrap and the sidecar's flag), file locations.
*/}}

{{- define "envoy-shutdown-manager.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release-scoped name of every object: <release>-<chart>, or the release alone when it already holds the chart name. */}}
{{- define "envoy-shutdown-manager.fullname" -}}
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

{{- define "envoy-shutdown-manager.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "envoy-shutdown-manager.selectorLabels" -}}
app.kubernetes.io/name: {{ include "envoy-shutdown-manager.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "envoy-shutdown-manager.labels" -}}
helm.sh/chart: {{ include "envoy-shutdown-manager.chart" . }}
{{ include "envoy-shutdown-manager.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: proxy
app.kubernetes.io/part-of: {{ include "envoy-shutdown-manager.name" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* repository[:tag][@digest]; the tag falls back to `defaultTag`. Call with (dict "image" … "defaultTag" …). */}}
{{- define "envoy-shutdown-manager.image" -}}
{{- $tag := default .defaultTag .image.tag }}
{{- $ref := .image.repository }}
{{- if $tag }}{{ $ref = printf "%s:%s" $ref $tag }}{{ end }}
{{- if .image.digest }}{{ $ref = printf "%s@%s" $ref .image.digest }}{{ end }}
{{- $ref }}
{{- end }}

{{/*
The timeout chain, in whole seconds, as JSON (read it with `include … | fromJson`):
  drain = shutdown.drainTimeout
  ready = shutdown.readyTimeout, else drain + 10
  grace = shutdown.terminationGracePeriodSeconds, else ready + 20
*/}}
{{- define "envoy-shutdown-manager.timeouts" -}}
{{- $s := .Values.shutdown }}
{{- $drain := int64 $s.drainTimeout }}
{{- $ready := add $drain 10 }}
{{- if not (kindIs "invalid" $s.readyTimeout) }}{{ $ready = int64 $s.readyTimeout }}{{ end }}
{{- $grace := add $ready 20 }}
{{- if not (kindIs "invalid" $s.terminationGracePeriodSeconds) }}{{ $grace = int64 $s.terminationGracePeriodSeconds }}{{ end }}
{{- dict "drain" $drain "ready" $ready "grace" $grace | toJson }}
{{- end }}

{{/* Seconds (a number, fractions allowed) as a Go duration for the binary: 60 -> 60s, 0.25 -> 250ms. */}}
{{- define "envoy-shutdown-manager.duration" -}}
{{- $ms := int64 (round (mulf (float64 .) 1000) 0) }}
{{- if eq (mod $ms 1000) 0 }}{{ printf "%ds" (div $ms 1000) }}{{ else }}{{ printf "%dms" $ms }}{{ end }}
{{- end }}

{{/* The stat prefixes of the chart's own listeners: never counted by the drain. */}}
{{- define "envoy-shutdown-manager.statsListenerName" -}}stats{{- end }}
{{- define "envoy-shutdown-manager.readinessListenerName" -}}ready{{- end }}
{{/* The static cluster through which the stats listener reaches the admin API. */}}
{{- define "envoy-shutdown-manager.adminClusterName" -}}envoy-admin{{- end }}

{{/* Envoy's admin address as the sidecar's ENVOY_SHUTDOWN_ADMIN_ADDRESS: unix:/path, host:port or [v6]:port. */}}
{{- define "envoy-shutdown-manager.adminAddressFlag" -}}
{{- $admin := .Values.admin }}
{{- if $admin.unixSocket.enabled }}
{{- printf "unix:%s" $admin.unixSocket.path }}
{{- else if contains ":" $admin.address }}
{{- printf "[%s]:%d" $admin.address (int64 $admin.port) }}
{{- else }}
{{- printf "%s:%d" $admin.address (int64 $admin.port) }}
{{- end }}
{{- end }}

{{/* Envoy's admin address as a bootstrap Address: a pipe or a loopback socket_address. */}}
{{- define "envoy-shutdown-manager.adminAddressBootstrap" -}}
{{- $admin := .Values.admin }}
{{- if $admin.unixSocket.enabled -}}
pipe:
  path: {{ $admin.unixSocket.path | quote }}
  # 0660: the pod's fsGroup owns the emptyDir, so the sidecar may connect even under another UID.
  mode: 432
{{- else -}}
socket_address:
  address: {{ $admin.address | quote }}
  port_value: {{ int64 $admin.port }}
{{- end }}
{{- end }}

{{/* Where the bootstrap is mounted in the Envoy container, and the file Envoy reads. */}}
{{- define "envoy-shutdown-manager.bootstrapDir" -}}/etc/envoy{{- end }}
{{- define "envoy-shutdown-manager.bootstrapFile" -}}envoy.yaml{{- end }}

{{/* The user's listeners as they go into the bootstrap: stat_prefix defaults to the name, drain_type to MODIFY_ONLY. */}}
{{- define "envoy-shutdown-manager.userListeners" -}}
{{- $out := list }}
{{- range .Values.listeners }}
{{- $l := deepCopy . }}
{{- if not (hasKey $l "stat_prefix") }}{{ $_ := set $l "stat_prefix" $l.name }}{{ end }}
{{- if not (hasKey $l "drain_type") }}{{ $_ := set $l "drain_type" "MODIFY_ONLY" }}{{ end }}
{{- $out = append $out $l }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/* Every listener the drain ignores, comma-separated: the chart's own two, then shutdown.ignoreListeners. */}}
{{- define "envoy-shutdown-manager.ignoredListeners" -}}
{{- $names := list (include "envoy-shutdown-manager.statsListenerName" .) (include "envoy-shutdown-manager.readinessListenerName" .) }}
{{- join "," (concat $names .Values.shutdown.ignoreListeners | uniq) }}
{{- end }}

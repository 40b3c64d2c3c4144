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
The timeout chain, in seconds, as JSON (read it with `include … | fromJson`):
  drain       = shutdown.drainTimeout
  ready       = shutdown.readyTimeout, else drain + 10 (always drain + 10 with nativeSidecar or mode
                sidecarless: nothing waits on /shutdown/ready, but the manager refuses a ready timeout
                not above the drain's, and the grace period keeps the same margin over the drain)
  grace       = shutdown.terminationGracePeriodSeconds, else ready + 20
  prestopWait = shutdown.envoyPrestopWait (fractions allowed)
  drainStart  = shutdown.drainStartTimeout, else prestopWait + drainStartMargin (fractions allowed)
  finalScrape = metrics.finalScrapeTimeout, else with the PodMonitor its interval (or the Prometheus
                Operator's default, 30s) + finalScrapeMargin, else 0 (off)
*/}}
{{- define "envoy-shutdown-manager.timeouts" -}}
{{- $s := .Values.shutdown }}
{{- $drain := int64 $s.drainTimeout }}
{{- $ready := add $drain 10 }}
{{- if and (include "envoy-shutdown-manager.classicSidecar" .) (not (kindIs "invalid" $s.readyTimeout)) }}{{ $ready = int64 $s.readyTimeout }}{{ end }}
{{- $grace := add $ready 20 }}
{{- if not (kindIs "invalid" $s.terminationGracePeriodSeconds) }}{{ $grace = int64 $s.terminationGracePeriodSeconds }}{{ end }}
{{- $prestopWait := float64 $s.envoyPrestopWait }}
{{- $drainStart := addf $prestopWait (include "envoy-shutdown-manager.drainStartMargin" .) }}
{{- if not (kindIs "invalid" $s.drainStartTimeout) }}{{ $drainStart = float64 $s.drainStartTimeout }}{{ end }}
{{- $m := .Values.metrics }}
{{- $finalScrape := 0.0 }}
{{- if not (kindIs "invalid" $m.finalScrapeTimeout) }}{{ $finalScrape = float64 $m.finalScrapeTimeout }}
{{- else if $m.podMonitor.enabled }}{{ $finalScrape = addf (include "envoy-shutdown-manager.seconds" (default "30s" $m.podMonitor.interval)) (include "envoy-shutdown-manager.finalScrapeMargin" .) }}
{{- end }}
{{- dict "drain" $drain "ready" $ready "grace" $grace "prestopWait" $prestopWait "drainStart" $drainStart "finalScrape" $finalScrape | toJson }}
{{- end }}

{{/*
Seconds the final scrape may come after one scrape interval: Prometheus scrapes each target once
an interval, at a fixed offset, so the next scrape is due within one; this covers its own delays.
*/}}
{{- define "envoy-shutdown-manager.finalScrapeMargin" -}}5{{- end }}

{{/* A Go duration of the PodMonitor's kind ("15s", "1m30s", "500ms") as seconds. */}}
{{- define "envoy-shutdown-manager.seconds" -}}
{{- $units := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 }}
{{- $seconds := 0.0 }}
{{- range regexFindAll "[0-9]+(ms|s|m|h)" . -1 }}
{{- $seconds = addf $seconds (mulf (float64 (regexFind "^[0-9]+" .)) (get $units (regexReplaceAll "^[0-9]+" . ""))) }}
{{- end }}
{{- $seconds }}
{{- end }}

{{/*
Seconds the drain-start timeout exceeds the envoy-prestop wait by, at least. The hook tolerates
Envoy's hook arriving up to envoyPrestopWait late; the manager grants the hook the same, plus the
start of a Node.js process on a busy node (about a second, several under CPU pressure).
*/}}
{{- define "envoy-shutdown-manager.drainStartMargin" -}}5{{- end }}

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

{{/*
"true" when Envoy's admin API is on the Unix socket: asked for, or forced by hostNetwork (the
pod's loopback is then the node's, where a fixed admin port can clash with other pods and node
services, Contour #3566). Empty otherwise. Every template asks this helper, never the value.
*/}}
{{- define "envoy-shutdown-manager.adminUnixSocket" -}}
{{- if or .Values.admin.unixSocket.enabled .Values.hostNetwork }}true{{ end }}
{{- end }}

{{/*
Envoy's admin address as the sidecar's ENVOY_SHUTDOWN_ADMIN_ADDRESS: unix:/path, host:port or
[v6]:port. Built from the same values as the bootstrap's, so both name the same IP literal: never
"localhost", which the manager could resolve to ::1 while Envoy binds 127.0.0.1 (Envoy Gateway #9853).
*/}}
{{- define "envoy-shutdown-manager.adminAddressFlag" -}}
{{- $admin := .Values.admin }}
{{- if include "envoy-shutdown-manager.adminUnixSocket" . }}
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
{{- if include "envoy-shutdown-manager.adminUnixSocket" . -}}
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

{{/* The header kubelet sends with Envoy's httpGet preStop hook; the manager compares it with its token. */}}
{{- define "envoy-shutdown-manager.hookTokenHeader" -}}X-Envoy-Shutdown-Token{{- end }}

{{/* The Secret holding the hook token: the user's existing one, or the chart's. */}}
{{- define "envoy-shutdown-manager.hookTokenSecretName" -}}
{{- if .Values.hookToken.existingSecret }}
{{- .Values.hookToken.existingSecret }}
{{- else }}
{{- printf "%s-hook-token" (include "envoy-shutdown-manager.fullname" . | trunc 52 | trimSuffix "-") }}
{{- end }}
{{- end }}

{{/*
The hook token, the same in every template of one render: the Secret the manager reads and the
header in Envoy's hook must agree. It is worked out once and kept on the root context, because
each call of randAlphaNum yields a new value. In order:
  - hookToken.existingSecret: read from that Secret (empty when it cannot be read: the validation
    then fails the render);
  - hookToken.value;
  - the chart's own Secret from an earlier release, so upgrades keep the token (and the pod spec);
  - 48 random letters and digits.
*/}}
{{- define "envoy-shutdown-manager.hookToken" -}}
{{- if not (hasKey $ "envoyShutdownManagerHookToken") }}
{{- $t := .Values.hookToken }}
{{- $token := "" }}
{{- if $t.existingSecret }}
{{- $secret := lookup "v1" "Secret" .Release.Namespace $t.existingSecret }}
{{- $token = dig "data" $t.secretKey "" $secret | b64dec }}
{{- else if $t.value }}
{{- $token = $t.value }}
{{- else }}
{{- $secret := lookup "v1" "Secret" .Release.Namespace (include "envoy-shutdown-manager.hookTokenSecretName" .) }}
{{- $token = dig "data" $t.secretKey "" $secret | b64dec }}
{{- if not $token }}{{ $token = randAlphaNum 48 }}{{ end }}
{{- end }}
{{- $_ := set $ "envoyShutdownManagerHookToken" $token }}
{{- end }}
{{- get $ "envoyShutdownManagerHookToken" }}
{{- end }}

{{/*
The rollout strategy: updateStrategy as given, or, when empty, one that works with the pod's
ports. Host ports stay taken until a terminating pod has drained and exited, so with hostNetwork
a surge pod would wait for a node with the ports free, forever where there is none: replace one
pod at a time instead. Otherwise surge first, so capacity never drops while old pods drain.
*/}}
{{- define "envoy-shutdown-manager.updateStrategy" -}}
{{- if .Values.updateStrategy }}
{{- toYaml .Values.updateStrategy }}
{{- else if .Values.hostNetwork }}
type: RollingUpdate
rollingUpdate:
  maxSurge: 0
  maxUnavailable: 1
{{- else }}
type: RollingUpdate
rollingUpdate:
  maxSurge: 1
  maxUnavailable: 0
{{- end }}
{{- end }}

{{/*
The shutdown-manager container, in either place the pod puts it:
  - classic (nativeSidecar false): a regular container beside Envoy. Its exec preStop hook is the
    drain, with --require-envoy-prestop on the hook command only, so that a restart of this
    container alone (a failed liveness probe) leaves Envoy serving, while a bare
    `kubectl exec … -- envoy-shutdown-manager shutdown` still drains.
  - native (nativeSidecar true): an init container with restartPolicy Always, started before Envoy
    and stopped after it. No preStop hook (kubelet would run it beside Envoy's, holding back only
    the sidecar's own SIGTERM): Envoy's own hook calls /shutdown/drain, and the server runs the
    drain from the same ENVOY_SHUTDOWN_* variables.
*/}}

{{/*
The drain's settings, as `shutdown` reads them: in the sidecar's environment (for the hook, the
native server and a manual drain), or in sidecar-less mode in Envoy's (for Envoy's own hook).
*/}}
{{- define "envoy-shutdown-manager.drainEnv" -}}
{{- $t := include "envoy-shutdown-manager.timeouts" . | fromJson }}
{{- $s := .Values.shutdown -}}
- name: ENVOY_SHUTDOWN_ADMIN_ADDRESS
  value: {{ include "envoy-shutdown-manager.adminAddressFlag" . | quote }}
- name: ENVOY_SHUTDOWN_DRAIN_TIMEOUT
  value: {{ include "envoy-shutdown-manager.duration" $t.drain | quote }}
- name: ENVOY_SHUTDOWN_MIN_DRAIN_DURATION
  value: {{ include "envoy-shutdown-manager.duration" $s.minDrainDuration | quote }}
- name: ENVOY_SHUTDOWN_QUIET_PERIOD
  value: {{ include "envoy-shutdown-manager.duration" $s.quietPeriod | quote }}
- name: ENVOY_SHUTDOWN_IGNORE_IDLE_CONNECTIONS
  value: {{ and $s.ignoreIdleConnections (gt (float64 $s.quietPeriod) 0.0) | toString | quote }}
- name: ENVOY_SHUTDOWN_EXIT_AT_CONNECTIONS
  value: {{ int64 $s.exitAtConnections | quote }}
- name: ENVOY_SHUTDOWN_CHECK_INTERVAL
  value: {{ include "envoy-shutdown-manager.duration" $s.checkInterval | quote }}
- name: ENVOY_SHUTDOWN_HEALTH_CHECK_FAILURE_DELAY
  value: {{ include "envoy-shutdown-manager.duration" $s.healthCheckFailureDelay | quote }}
- name: ENVOY_SHUTDOWN_ADMIN_TIMEOUT
  value: {{ include "envoy-shutdown-manager.duration" $s.adminTimeout | quote }}
- name: ENVOY_SHUTDOWN_CONNECTIONS
  value: {{ $s.connections | quote }}
- name: ENVOY_SHUTDOWN_IGNORE_LISTENERS
  value: {{ include "envoy-shutdown-manager.ignoredListeners" . | quote }}
{{- end }}

{{/* The sidecar's environment: every setting, read alike by the server, the hook and a manual drain. */}}
{{- define "envoy-shutdown-manager.managerEnv" -}}
{{- $t := include "envoy-shutdown-manager.timeouts" . | fromJson }}
{{- $sm := .Values.shutdownManager }}
{{- include "envoy-shutdown-manager.drainEnv" . }}
- name: ENVOY_SHUTDOWN_READY_FILE
  value: {{ $sm.readyFile | quote }}
- name: ENVOY_SHUTDOWN_PORT
  value: {{ int64 $sm.port | quote }}
- name: ENVOY_SHUTDOWN_READY_TIMEOUT
  value: {{ include "envoy-shutdown-manager.duration" $t.ready | quote }}
{{- if .Values.nativeSidecar }}
- name: ENVOY_SHUTDOWN_DRAIN_ENDPOINT
  value: "true"
{{- else }}
- name: ENVOY_SHUTDOWN_ENVOY_PRESTOP_WAIT
  value: {{ include "envoy-shutdown-manager.duration" $t.prestopWait | quote }}
- name: ENVOY_SHUTDOWN_DRAIN_START_TIMEOUT
  value: {{ include "envoy-shutdown-manager.duration" $t.drainStart | quote }}
{{- end }}
- name: ENVOY_SHUTDOWN_HOOK_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "envoy-shutdown-manager.hookTokenSecretName" . }}
      key: {{ .Values.hookToken.secretKey | quote }}
- name: ENVOY_SHUTDOWN_LOG_LEVEL
  value: {{ $sm.logLevel | quote }}
- name: ENVOY_SHUTDOWN_LOG_FORMAT
  value: {{ $sm.logFormat | quote }}
{{- if .Values.events.enabled }}
{{ include "envoy-shutdown-manager.eventsEnv" . }}
{{- end }}
{{- if gt $t.finalScrape 0.0 }}
- name: ENVOY_SHUTDOWN_FINAL_SCRAPE_TIMEOUT
  value: {{ include "envoy-shutdown-manager.duration" $t.finalScrape | quote }}
- name: ENVOY_SHUTDOWN_TERMINATION_GRACE_PERIOD
  value: {{ include "envoy-shutdown-manager.duration" $t.grace | quote }}
{{- end }}
{{- end }}

{{- define "envoy-shutdown-manager.managerContainer" -}}
{{- $sm := .Values.shutdownManager }}
{{- $native := .Values.nativeSidecar -}}
- name: shutdown-manager
  image: {{ include "envoy-shutdown-manager.image" (dict "image" $sm.image "defaultTag" .Chart.AppVersion) | quote }}
  imagePullPolicy: {{ $sm.image.pullPolicy }}
  {{- if $native }}
  # A native sidecar: started before Envoy, stopped only once Envoy has exited.
  restartPolicy: Always
  {{- end }}
  args: [shutdown-manager]
  # Every setting as an environment variable, read by the server and by the drain alike:
  # `kubectl exec <pod> -c shutdown-manager -- envoy-shutdown-manager shutdown` drains exactly as the hook does.
  env:
    {{- include "envoy-shutdown-manager.managerEnv" . | nindent 4 }}
    {{- with $sm.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    - name: shutdown-mgr
      containerPort: {{ int64 $sm.port }}
      protocol: TCP
  {{- if not $native }}
  lifecycle:
    preStop:
      # The drain: fail Envoy's health check, drain its listeners, wait, write the ready file. Only
      # once Envoy's own hook has reached the manager: a restart of this container alone drains nothing.
      exec:
        command: [envoy-shutdown-manager, shutdown, --require-envoy-prestop]
  {{- end }}
  {{- with $sm.startupProbe }}
  {{- if and $native .enabled }}
  startupProbe:
    httpGet:
      path: /healthz
      port: shutdown-mgr
    {{- toYaml (omit . "enabled") | nindent 4 }}
  {{- end }}
  {{- end }}
  {{- with $sm.readinessProbe }}
  {{- if .enabled }}
  readinessProbe:
    httpGet:
      path: /healthz
      port: shutdown-mgr
    {{- toYaml (omit . "enabled") | nindent 4 }}
  {{- end }}
  {{- end }}
  {{- with $sm.livenessProbe }}
  {{- if .enabled }}
  # Enabled by values: see shutdownManager.livenessProbe in values.yaml.
  livenessProbe:
    httpGet:
      path: /healthz
      port: shutdown-mgr
    {{- toYaml (omit . "enabled") | nindent 4 }}
  {{- end }}
  {{- end }}
  {{- with $sm.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $sm.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: shutdown
      mountPath: {{ dir $sm.readyFile }}
    {{- if include "envoy-shutdown-manager.adminUnixSocket" . }}
    - name: envoy-admin
      mountPath: {{ dir .Values.admin.unixSocket.path }}
    {{- end }}
    {{- if .Values.events.enabled }}
    # The token that creates the drain's Event; Envoy's container has none.
    - name: kube-api-access
      mountPath: {{ include "envoy-shutdown-manager.serviceAccountDir" . }}
      readOnly: true
    {{- end }}
{{- end }}

{{/*
Prometheus rules on the manager's /metrics, one list for both ways of shipping them: a
PrometheusRule (Prometheus Operator) and a plain rules file in a ConfigMap. Every alert looks back
metrics.alerts.window, long enough for the scrapes a terminating pod gets before it is gone, and
keeps the pod's labels, so it names the pod. Runbooks: docs/observe.md, anchors as the alert names.
*/}}
{{- define "envoy-shutdown-manager.ruleGroups" -}}
{{- $a := .Values.metrics.alerts }}
{{- $w := $a.window }}
{{- $t := include "envoy-shutdown-manager.timeouts" . | fromJson }}
{{- $m := "envoy_shutdown_manager" -}}
- name: envoy-shutdown-manager.rules
  rules:
    - record: namespace_result:{{ $m }}_drains:increase{{ $w }}
      expr: sum by (namespace, result) (increase({{ $m }}_drains_total[{{ $w }}]))
    - record: namespace:{{ $m }}_drain_duration_seconds:p90_{{ $w }}
      expr: histogram_quantile(0.9, sum by (namespace, le) (increase({{ $m }}_drain_duration_seconds_bucket[{{ $w }}])))
    - record: namespace:{{ $m }}_released_after_last_connection_seconds:p90_{{ $w }}
      expr: histogram_quantile(0.9, sum by (namespace, le) (increase({{ $m }}_released_after_last_connection_seconds_bucket[{{ $w }}])))
- name: envoy-shutdown-manager.alerts
  rules:
    {{- $alerts := list
      (dict "name" "EnvoyDrainTimedOut"
        "expr" (printf "increase(%s_drains_total{result=\"timeout\"}[%s]) - ignoring(result) increase(%s_unknown_count_timeouts_total[%s]) > 0.5" $m $w $m $w)
        "summary" "A drain of Envoy ran to its timeout with connections still open"
        "description" "{{ $labels.namespace }}/{{ $labels.pod }}: the drain timeout ended with connections open; they were cut when Envoy stopped.")
      (dict "name" "EnvoyDrainUnknownCount"
        "expr" (printf "increase(%s_unknown_count_timeouts_total[%s]) > 0.5" $m $w)
        "summary" "A drain of Envoy ran to its timeout without a readable connection count"
        "description" "{{ $labels.namespace }}/{{ $labels.pod }}: Envoy's connection count could not be read until the drain timeout (unknown is not zero).")
      (dict "name" "EnvoyReleasedUnreachable"
        "expr" (printf "increase(%s_drains_total{result=\"envoy-unreachable\"}[%s]) > 0.5" $m $w)
        "summary" "Envoy was released because its admin API was unreachable"
        "description" "{{ $labels.namespace }}/{{ $labels.pod }}: no drain, or Envoy exited during it.")
      (dict "name" "EnvoyPrestopReadyTimeout"
        "expr" (printf "increase(%s_handshakes_total{endpoint=\"ready\",code=\"500\"}[%s]) > 0.5" $m $w)
        "summary" "Envoy's preStop hook was answered 500: no drain report before the ready timeout"
        "description" "{{ $labels.namespace }}/{{ $labels.pod }}: the manager released Envoy without a finished drain.")
      (dict "name" "EnvoyDrainNearTimeout"
        "expr" (printf "increase(%s_drain_duration_seconds_sum{result=\"drained\"}[%s]) / increase(%s_drain_duration_seconds_count{result=\"drained\"}[%s]) > %v" $m $w $m $w (mulf $a.nearTimeoutRatio $t.drain))
        "summary" "Drains of Envoy complete close to their timeout"
        "description" (printf "{{ $labels.namespace }}/{{ $labels.pod }}: completed drains took {{ $value | humanizeDuration }} on average, over %v of the %ds drain timeout." $a.nearTimeoutRatio (int64 $t.drain)))
    }}
    {{- range $alerts }}
    - alert: {{ .name }}
      expr: {{ .expr | quote }}
      for: {{ $a.for }}
      labels:
        severity: {{ $a.severity }}
        {{- with $a.labels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        summary: {{ .summary | quote }}
        description: {{ .description | quote }}
        {{- if $a.runbookBaseUrl }}
        runbook_url: {{ printf "%s#%s" $a.runbookBaseUrl (lower .name) | quote }}
        {{- end }}
    {{- end }}
{{- end }}

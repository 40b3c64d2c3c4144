{{/*
Checks the values against each other (values.schema.json has already checked each one alone),
collects every problem and fails the render once, listing them all, so a user fixes their values
in one pass. Renders nothing when the values are consistent.
*/}}
{{- define "envoy-shutdown-manager.validate" -}}
{{- $errors := list }}
{{- $v := .Values }}
{{- $s := $v.shutdown }}
{{- $t := include "envoy-shutdown-manager.timeouts" . | fromJson }}
{{- $drain := float64 $t.drain }}
{{- $ready := float64 $t.ready }}
{{- $grace := float64 $t.grace }}

{{- /* The timeout chain: min drain <= drain < ready < grace. */}}
{{- if le $ready $drain }}
{{- $errors = append $errors (printf "shutdown.readyTimeout (%d s) must be longer than shutdown.drainTimeout (%d s): the manager would answer Envoy's preStop hook, and Envoy would get SIGTERM, before the drain ends" (int64 $ready) (int64 $drain)) }}
{{- end }}
{{- if le $grace $ready }}
{{- $errors = append $errors (printf "shutdown.terminationGracePeriodSeconds (%d s) must be longer than the ready timeout (%d s): kubelet would SIGKILL the pod while Envoy's preStop hook still waits" (int64 $grace) (int64 $ready)) }}
{{- end }}
{{- if gt (float64 $s.minDrainDuration) $drain }}
{{- $errors = append $errors (printf "shutdown.minDrainDuration (%v s) must not be longer than shutdown.drainTimeout (%d s)" $s.minDrainDuration (int64 $drain)) }}
{{- end }}
{{- if ge (float64 $s.healthCheckFailureDelay) $drain }}
{{- $errors = append $errors (printf "shutdown.healthCheckFailureDelay (%v s) must be shorter than shutdown.drainTimeout (%d s), or the health check would never fail" $s.healthCheckFailureDelay (int64 $drain)) }}
{{- end }}
{{- if ge (float64 $s.checkInterval) $drain }}
{{- $errors = append $errors (printf "shutdown.checkInterval (%v s) must be shorter than shutdown.drainTimeout (%d s)" $s.checkInterval (int64 $drain)) }}
{{- end }}
{{- if ge (float64 $s.adminTimeout) $drain }}
{{- $errors = append $errors (printf "shutdown.adminTimeout (%v s) must be shorter than shutdown.drainTimeout (%d s)" $s.adminTimeout (int64 $drain)) }}
{{- end }}

{{- /* Ports the chart binds in the pod must not collide, with each other or with the user's listeners. */}}
{{- $reserved := dict }}
{{- if not $v.admin.unixSocket.enabled }}{{ $_ := set $reserved (toString (int64 $v.admin.port)) "admin.port" }}{{ end }}
{{- range $key, $port := dict "statsListener.port" $v.statsListener.port "readinessListener.port" $v.readinessListener.port "shutdownManager.port" $v.shutdownManager.port }}
{{- $p := toString (int64 $port) }}
{{- if hasKey $reserved $p }}
{{- $errors = append $errors (printf "%s (%s) is already used by %s" $key $p (get $reserved $p)) }}
{{- else }}
{{- $_ := set $reserved $p $key }}
{{- end }}
{{- end }}

{{- /* The user's listeners: unique names and stat prefixes, none of the chart's own, no reserved port. */}}
{{- $ownPrefixes := list (include "envoy-shutdown-manager.statsListenerName" .) (include "envoy-shutdown-manager.readinessListenerName" .) "admin" }}
{{- $seen := dict }}
{{- $names := dict }}
{{- range $i, $l := $v.listeners }}
{{- $prefix := default $l.name $l.stat_prefix }}
{{- if has $prefix $ownPrefixes }}
{{- $errors = append $errors (printf "listeners[%d] (%s): stat prefix %q is the chart's own (%s); the drain would never count its connections" $i $l.name $prefix (join ", " $ownPrefixes)) }}
{{- end }}
{{- if hasKey $seen $prefix }}
{{- $errors = append $errors (printf "listeners[%d] (%s): stat prefix %q is used twice" $i $l.name $prefix) }}
{{- end }}
{{- $_ := set $seen $prefix true }}
{{- if and (not (has $prefix $ownPrefixes)) (has $l.name $ownPrefixes) }}
{{- $errors = append $errors (printf "listeners[%d]: name %q is the chart's own" $i $l.name) }}
{{- end }}
{{- if hasKey $names $l.name }}
{{- $errors = append $errors (printf "listeners[%d]: name %q is used twice" $i $l.name) }}
{{- end }}
{{- $_ := set $names $l.name true }}
{{- $port := dig "address" "socket_address" "port_value" "" $l }}
{{- if and (ne (toString $port) "") (hasKey $reserved (toString (int64 $port))) }}
{{- $errors = append $errors (printf "listeners[%d] (%s): port %d is already used by %s" $i $l.name (int64 $port) (get $reserved (toString (int64 $port)))) }}
{{- end }}
{{- end }}
{{- range $i, $c := $v.clusters }}
{{- if eq $c.name (include "envoy-shutdown-manager.adminClusterName" $) }}
{{- $errors = append $errors (printf "clusters[%d]: name %q is the chart's own (the stats listener's route to the admin API)" $i $c.name) }}
{{- end }}
{{- end }}
{{- range $key := list "admin" "static_resources" }}
{{- if hasKey $v.bootstrapExtra $key }}
{{- $errors = append $errors (printf "bootstrapExtra.%s: the chart renders this part of the bootstrap; use admin, listeners and clusters instead" $key) }}
{{- end }}
{{- end }}

{{- /* Files: each shared directory is an emptyDir mounted at its own path. */}}
{{- $readyDir := dir $v.shutdownManager.readyFile }}
{{- if eq $readyDir "/" }}
{{- $errors = append $errors (printf "shutdownManager.readyFile (%s) must be inside a directory, which the chart mounts as an emptyDir" $v.shutdownManager.readyFile) }}
{{- end }}
{{- if $v.admin.unixSocket.enabled }}
{{- $socketDir := dir $v.admin.unixSocket.path }}
{{- if eq $socketDir "/" }}
{{- $errors = append $errors (printf "admin.unixSocket.path (%s) must be inside a directory, which the chart mounts as an emptyDir in both containers" $v.admin.unixSocket.path) }}
{{- end }}
{{- if eq $socketDir $readyDir }}
{{- $errors = append $errors (printf "admin.unixSocket.path and shutdownManager.readyFile must be in different directories (both are %s)" $socketDir) }}
{{- end }}
{{- if eq $socketDir "/tmp" }}
{{- $errors = append $errors "admin.unixSocket.path must not be in /tmp, which is the Envoy container's own scratch volume" }}
{{- end }}
{{- if gt (len $v.admin.unixSocket.path) 107 }}
{{- $errors = append $errors (printf "admin.unixSocket.path is %d characters long; a Unix socket path holds at most 107" (len $v.admin.unixSocket.path)) }}
{{- end }}
{{- end }}
{{- if eq $v.readinessListener.path $v.readinessListener.livenessPath }}
{{- $errors = append $errors (printf "readinessListener.path and readinessListener.livenessPath must differ (both are %s): liveness must not fail when the drain starts" $v.readinessListener.path) }}
{{- end }}

{{- /* Availability. */}}
{{- $pdb := $v.podDisruptionBudget }}
{{- if $pdb.enabled }}
{{- $hasMin := not (kindIs "invalid" $pdb.minAvailable) }}
{{- $hasMax := not (kindIs "invalid" $pdb.maxUnavailable) }}
{{- if and $hasMin $hasMax }}
{{- $errors = append $errors "podDisruptionBudget: set minAvailable or maxUnavailable, not both" }}
{{- else if not (or $hasMin $hasMax) }}
{{- $errors = append $errors "podDisruptionBudget: set minAvailable or maxUnavailable" }}
{{- end }}
{{- if and $hasMin (not $v.autoscaling.enabled) (not (kindIs "string" $pdb.minAvailable)) }}
{{- if ge (float64 $pdb.minAvailable) (float64 $v.replicaCount) }}
{{- $errors = append $errors (printf "podDisruptionBudget.minAvailable (%v) must be below replicaCount (%v), or no pod can ever be evicted and node drains hang" $pdb.minAvailable $v.replicaCount) }}
{{- end }}
{{- end }}
{{- end }}
{{- $hpa := $v.autoscaling }}
{{- if $hpa.enabled }}
{{- if gt (float64 $hpa.minReplicas) (float64 $hpa.maxReplicas) }}
{{- $errors = append $errors (printf "autoscaling.minReplicas (%v) must not exceed autoscaling.maxReplicas (%v)" $hpa.minReplicas $hpa.maxReplicas) }}
{{- end }}
{{- if and (kindIs "invalid" $hpa.targetCPUUtilizationPercentage) (kindIs "invalid" $hpa.targetMemoryUtilizationPercentage) }}
{{- $errors = append $errors "autoscaling: set targetCPUUtilizationPercentage, targetMemoryUtilizationPercentage or both" }}
{{- end }}
{{- end }}

{{- if $errors }}
{{- fail (printf "\n\ninvalid values for the %s chart (%d %s):\n  - %s\n" .Chart.Name (len $errors) (ternary "problem" "problems" (eq (len $errors) 1)) (join "\n  - " $errors)) }}
{{- end }}
{{- end }}

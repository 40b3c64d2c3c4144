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
{{- $sidecarless := include "envoy-shutdown-manager.sidecarless" . }}

{{- /* The timeout chain: min drain, quiet period <= drain < ready < grace (native, sidecar-less: drain < grace). */}}
{{- if le $ready $drain }}
{{- $errors = append $errors (printf "shutdown.readyTimeout (%d s) must be longer than shutdown.drainTimeout (%d s): the manager would answer Envoy's preStop hook, and Envoy would get SIGTERM, before the drain ends" (int64 $ready) (int64 $drain)) }}
{{- end }}
{{- if $sidecarless }}
{{- if le $grace $drain }}
{{- $errors = append $errors (printf "shutdown.terminationGracePeriodSeconds (%d s) must be longer than shutdown.drainTimeout (%d s): with mode sidecarless, kubelet would SIGKILL Envoy while its preStop hook still drains" (int64 $grace) (int64 $drain)) }}
{{- end }}
{{- else if $v.nativeSidecar }}
{{- if le $grace $drain }}
{{- $errors = append $errors (printf "shutdown.terminationGracePeriodSeconds (%d s) must be longer than shutdown.drainTimeout (%d s): with nativeSidecar, kubelet would SIGKILL the pod while Envoy's preStop hook still drains" (int64 $grace) (int64 $drain)) }}
{{- end }}
{{- if semverCompare "<1.29.0-0" .Capabilities.KubeVersion.Version }}
{{- $errors = append $errors (printf "nativeSidecar needs Kubernetes 1.29 or later (init containers with restartPolicy Always), and this render targets %s: older API servers drop the field and the pod never leaves its init phase (helm template: pass --kube-version)" .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- else }}
{{- if le $grace $ready }}
{{- $errors = append $errors (printf "shutdown.terminationGracePeriodSeconds (%d s) must be longer than the ready timeout (%d s): kubelet would SIGKILL the pod while Envoy's preStop hook still waits" (int64 $grace) (int64 $ready)) }}
{{- end }}
{{- /* No drain, no hostage: the manager gives up on a drain that never started, before the ready timeout and not before the hook could have started. */}}
{{- $margin := float64 (include "envoy-shutdown-manager.drainStartMargin" .) }}
{{- $drainStart := printf "shutdown.drainStartTimeout (%v s)" $t.drainStart }}
{{- if kindIs "invalid" $s.drainStartTimeout }}{{ $drainStart = printf "shutdown.drainStartTimeout (null: shutdown.envoyPrestopWait + %v = %v s)" $margin $t.drainStart }}{{ end }}
{{- if lt $t.drainStart (addf $t.prestopWait $margin) }}
{{- $errors = append $errors (printf "%s must be at least shutdown.envoyPrestopWait (%v s) + %v s: the manager would release Envoy undrained while the sidecar's hook may still be starting" $drainStart $t.prestopWait $margin) }}
{{- end }}
{{- if ge $t.drainStart $ready }}
{{- $errors = append $errors (printf "%s must be shorter than the ready timeout (%d s), or Envoy is never released sooner when no drain starts" $drainStart (int64 $ready)) }}
{{- end }}
{{- end }}
{{- if gt $t.finalScrape 0.0 }}
{{- if $sidecarless }}
{{- if not (kindIs "invalid" $v.metrics.finalScrapeTimeout) }}
{{- $errors = append $errors "metrics.finalScrapeTimeout: mode sidecarless has no shutdown-manager to serve /metrics: set mode to sidecar, or metrics.finalScrapeTimeout to 0" }}
{{- end }}
{{- else if ge $t.finalScrape $grace }}
{{- $finalScrape := printf "metrics.finalScrapeTimeout (%v s)" $t.finalScrape }}
{{- if kindIs "invalid" $v.metrics.finalScrapeTimeout }}{{ $finalScrape = printf "metrics.finalScrapeTimeout (null: the PodMonitor's interval + %s = %v s)" (include "envoy-shutdown-manager.finalScrapeMargin" .) $t.finalScrape }}{{ end }}
{{- $errors = append $errors (printf "%s must be shorter than shutdown.terminationGracePeriodSeconds (%d s): the stay for the final scrape ends before kubelet's SIGKILL anyway (0: off)" $finalScrape (int64 $grace)) }}
{{- end }}
{{- end }}
{{- if ge (float64 $s.quietPeriod) $drain }}
{{- $errors = append $errors (printf "shutdown.quietPeriod (%v s) must be shorter than shutdown.drainTimeout (%d s), or the drain could only end at its timeout" $s.quietPeriod (int64 $drain)) }}
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

{{- /* The hook token: one source, usable as an HTTP header value. */}}
{{- $ht := $v.hookToken }}
{{- if and $ht.value $ht.existingSecret }}
{{- $errors = append $errors "hookToken: set value or existingSecret, not both" }}
{{- else if and $ht.existingSecret (not $sidecarless) }}
{{- $token := include "envoy-shutdown-manager.hookToken" . }}
{{- if not $token }}
{{- $errors = append $errors (printf "hookToken.existingSecret: Secret %s/%s cannot be read or has no key %q (helm template and --dry-run do not read the cluster: set hookToken.value there)" .Release.Namespace $ht.existingSecret $ht.secretKey) }}
{{- else if not (regexMatch "^[!-~]{16,}$" $token) }}
{{- $errors = append $errors (printf "hookToken.existingSecret: the token in Secret %s (key %q) must be 16 or more visible ASCII characters without spaces: it is sent as an HTTP header" $ht.existingSecret $ht.secretKey) }}
{{- end }}
{{- end }}

{{- /* The drain's environment belongs to the chart: extraEnv adds to it and overrides nothing. */}}
{{- $chartEnv := dict }}
{{- $envKey := ternary "envoy.extraEnv" "shutdownManager.extraEnv" (not (empty $sidecarless)) }}
{{- $extraEnv := ternary $v.envoy.extraEnv $v.shutdownManager.extraEnv (not (empty $sidecarless)) }}
{{- $chartEnvYaml := ternary (include "envoy-shutdown-manager.hookEnv" .) (include "envoy-shutdown-manager.managerEnv" .) (not (empty $sidecarless)) }}
{{- range $chartEnvYaml | fromYamlArray }}{{ $_ := set $chartEnv .name true }}{{ end }}
{{- range $i, $e := $extraEnv }}
{{- if hasKey $chartEnv $e.name }}
{{- $errors = append $errors (printf "%s[%d]: %s is set by the chart from its values; change the value instead" $envKey $i $e.name) }}
{{- else if and (eq $e.name "ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP") $sidecarless }}
{{- $errors = append $errors (printf "%s[%d]: %s has no place in mode sidecarless: there is no ready file to find Envoy's hook beside, and the hook would refuse to drain" $envKey $i $e.name) }}
{{- else if eq $e.name "ENVOY_SHUTDOWN_REQUIRE_ENVOY_PRESTOP" }}
{{- $errors = append $errors (printf "%s[%d]: %s belongs on the preStop hook's command only (the chart puts --require-envoy-prestop there): in the environment it would keep a manual `kubectl exec … shutdown` from draining" $envKey $i $e.name) }}
{{- end }}
{{- end }}

{{- /* Sidecar-less mode: no manager container, an executable Envoy's container can run. */}}
{{- if $sidecarless }}
{{- if $v.nativeSidecar }}
{{- $errors = append $errors "nativeSidecar: true asks for the manager as a native sidecar, and mode sidecarless for no manager at all: set nativeSidecar to false, or mode to sidecar" }}
{{- end }}
{{- if $v.events.enabled }}
{{- $errors = append $errors "events.enabled: mode sidecarless has no shutdown-manager, which is what sends each drain's Event (after it released Envoy): set mode to sidecar, or events.enabled to false" }}
{{- end }}
{{- if $v.metrics.podMonitor.enabled }}
{{- $errors = append $errors "metrics.podMonitor.enabled: mode sidecarless has no shutdown-manager to serve /metrics: set mode to sidecar, or metrics.podMonitor.enabled to false (statsListener.prometheusAnnotations covers Envoy's own stats)" }}
{{- end }}
{{- range $key := list "prometheusRule" "rulesConfigMap" "dashboard" }}
{{- if (index $v.metrics $key).enabled }}
{{- $errors = append $errors (printf "metrics.%s.enabled: mode sidecarless has no shutdown-manager, whose /metrics the alerts and the dashboard read: set mode to sidecar, or metrics.%s.enabled to false" $key $key) }}
{{- end }}
{{- end }}
{{- if $v.shutdownManager.extraEnv }}
{{- $errors = append $errors "shutdownManager.extraEnv: mode sidecarless has no shutdown-manager container; the hook runs in Envoy's container, so set its variables in envoy.extraEnv" }}
{{- end }}
{{- if eq $v.sidecarless.source "imageVolume" }}
{{- if semverCompare (printf "<%s" (include "envoy-shutdown-manager.imageVolumeKubeVersion" .)) .Capabilities.KubeVersion.Version }}
{{- $errors = append $errors (printf "sidecarless.source imageVolume needs Kubernetes 1.33 or later (image volumes, beta; the ImageVolume feature gate is on by default from 1.35), and this render targets %s: older API servers drop the volume's source and refuse the pod (helm template: pass --kube-version)" .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- else }}
{{- $size := regexFind "^[0-9]+" $v.sidecarless.sizeLimit | int64 }}
{{- if hasSuffix "Gi" $v.sidecarless.sizeLimit }}{{ $size = mul $size 1024 }}{{ end }}
{{- $min := int64 (include "envoy-shutdown-manager.sidecarlessMinSizeMi" .) }}
{{- if lt $size $min }}
{{- $errors = append $errors (printf "sidecarless.sizeLimit (%s) must be at least %dMi: the copy is about 111 MB, and kubelet evicts a pod whose emptyDir outgrows its limit" $v.sidecarless.sizeLimit $min) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Ports the chart binds in the pod must not collide, with each other or with the user's listeners. */}}
{{- $socket := include "envoy-shutdown-manager.adminUnixSocket" . }}
{{- $reserved := dict }}
{{- if not $socket }}{{ $_ := set $reserved (toString (int64 $v.admin.port)) "admin.port" }}{{ end }}
{{- $chartPorts := dict "statsListener.port" $v.statsListener.port "readinessListener.port" $v.readinessListener.port }}
{{- if not $sidecarless }}{{ $_ := set $chartPorts "shutdownManager.port" $v.shutdownManager.port }}{{ end }}
{{- range $key, $port := $chartPorts }}
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
{{- range $i, $p := $v.envoy.ports }}
{{- if has $p.name (list "metrics" "ready") }}
{{- $errors = append $errors (printf "envoy.ports[%d]: name %q is the chart's own (its stats and readiness listeners)" $i $p.name) }}
{{- end }}
{{- if hasKey $reserved (toString (int64 $p.containerPort)) }}
{{- $errors = append $errors (printf "envoy.ports[%d] (%s): port %d is already used by %s" $i $p.name (int64 $p.containerPort) (get $reserved (toString (int64 $p.containerPort)))) }}
{{- end }}
{{- end }}

{{- /* hostNetwork: every port is a port of the node, bound by a process without capabilities. */}}
{{- if $v.hostNetwork }}
{{- $declared := dict }}
{{- range $v.envoy.ports }}{{ $_ := set $declared (toString (int64 .containerPort)) true }}{{ end }}
{{- $envoyMayBindLow := has "NET_BIND_SERVICE" (dig "capabilities" "add" list $v.envoy.securityContext) }}
{{- $managerMayBindLow := has "NET_BIND_SERVICE" (dig "capabilities" "add" list $v.shutdownManager.securityContext) }}
{{- $bound := list (list "statsListener.port" $v.statsListener.port $envoyMayBindLow) (list "readinessListener.port" $v.readinessListener.port $envoyMayBindLow) }}
{{- if not $sidecarless }}{{ $bound = append $bound (list "shutdownManager.port" $v.shutdownManager.port $managerMayBindLow) }}{{ end }}
{{- range $i, $l := $v.listeners }}
{{- $port := dig "address" "socket_address" "port_value" "" $l }}
{{- if ne (toString $port) "" }}
{{- $bound = append $bound (list (printf "listeners[%d] (%s)" $i $l.name) $port $envoyMayBindLow) }}
{{- if not (hasKey $declared (toString (int64 $port))) }}
{{- $errors = append $errors (printf "listeners[%d] (%s): with hostNetwork, port %d must be listed in envoy.ports, so that the scheduler never puts two pods that bind it on one node" $i $l.name (int64 $port)) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $bound }}
{{- if and (lt (int64 (index . 1)) 1024) (not (index . 2)) }}
{{- $errors = append $errors (printf "%s (%d): with hostNetwork, ports below 1024 need the NET_BIND_SERVICE capability, which the container's securityContext drops" (index . 0) (int64 (index . 1))) }}
{{- end }}
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
{{- if $sidecarless }}{{ $readyDir = "" }}{{ end }}
{{- if eq $readyDir "/" }}
{{- $errors = append $errors (printf "shutdownManager.readyFile (%s) must be inside a directory, which the chart mounts as an emptyDir" $v.shutdownManager.readyFile) }}
{{- end }}
{{- if $socket }}
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
{{- $esm := include "envoy-shutdown-manager.sidecarlessMountPath" . }}
{{- if and $sidecarless (or (eq $socketDir $esm) (hasPrefix (printf "%s/" $esm) $socketDir)) }}
{{- $errors = append $errors (printf "admin.unixSocket.path must not be under %s, where mode sidecarless mounts the executable read-only" $esm) }}
{{- end }}
{{- if gt (len $v.admin.unixSocket.path) 107 }}
{{- $errors = append $errors (printf "admin.unixSocket.path is %d characters long; a Unix socket path holds at most 107" (len $v.admin.unixSocket.path)) }}
{{- end }}
{{- end }}
{{- if eq $v.readinessListener.path $v.readinessListener.livenessPath }}
{{- $errors = append $errors (printf "readinessListener.path and readinessListener.livenessPath must differ (both are %s): liveness must not fail when the drain starts" $v.readinessListener.path) }}
{{- end }}
{{- if eq $v.readinessListener.livenessPath "/" }}
{{- $errors = append $errors "readinessListener.livenessPath must not be /: the readiness listener answers readiness on / (a load balancer's default check), and liveness must not fail when the drain starts" }}
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
{{- if and $hasMin (not $v.autoscaling.enabled) (ne $v.kind "DaemonSet") (not (kindIs "string" $pdb.minAvailable)) }}
{{- if ge (float64 $pdb.minAvailable) (float64 $v.replicaCount) }}
{{- $errors = append $errors (printf "podDisruptionBudget.minAvailable (%v) must be below replicaCount (%v), or no pod can ever be evicted and node drains hang" $pdb.minAvailable $v.replicaCount) }}
{{- end }}
{{- end }}
{{- end }}
{{- $hpa := $v.autoscaling }}
{{- if and $hpa.enabled (eq $v.kind "DaemonSet") }}
{{- $errors = append $errors "autoscaling.enabled needs kind Deployment: a DaemonSet runs one pod per node and cannot be scaled" }}
{{- end }}
{{- if eq $v.kind "DaemonSet" }}
{{- with $v.updateStrategy }}{{ if eq (toString .type) "Recreate" }}
{{- $errors = append $errors "updateStrategy.type Recreate is a Deployment strategy: a DaemonSet takes RollingUpdate or OnDelete" }}
{{- end }}{{ end }}
{{- else if eq (toString $v.updateStrategy.type) "OnDelete" }}
{{- $errors = append $errors "updateStrategy.type OnDelete is a DaemonSet strategy: a Deployment takes RollingUpdate or Recreate" }}
{{- end }}
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

{{/*
Envoy's bootstrap. The chart owns three things in it: the admin API (loopback or a Unix socket,
never the pod IP), a stats listener that exposes only /stats/prometheus from the admin API, and a
readiness listener whose health check filter turns 503 the moment the drain starts. Every
listener, the user's included, drains only when asked (drain_type MODIFY_ONLY), so that
/healthcheck/fail takes the pod out of rotation without cutting connections short.
*/}}
{{- define "envoy-shutdown-manager.bootstrap" -}}
{{- $stats := include "envoy-shutdown-manager.statsListenerName" . -}}
{{- $ready := include "envoy-shutdown-manager.readinessListenerName" . -}}
{{- $adminCluster := include "envoy-shutdown-manager.adminClusterName" . -}}
admin:
  address:
    {{- include "envoy-shutdown-manager.adminAddressBootstrap" . | nindent 4 }}
static_resources:
  listeners:
    - name: {{ $stats }}
      stat_prefix: {{ $stats }}
      drain_type: MODIFY_ONLY
      address:
        socket_address:
          address: 0.0.0.0
          port_value: {{ int64 .Values.statsListener.port }}
      filter_chains:
        - filters:
            - name: envoy.filters.network.http_connection_manager
              typed_config:
                "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                stat_prefix: {{ $stats }}
                codec_type: AUTO
                route_config:
                  name: {{ $stats }}
                  virtual_hosts:
                    - name: {{ $stats }}
                      domains: ["*"]
                      routes:
                        # Only the Prometheus rendering of the stats: nothing else of the admin API is reachable from outside the pod.
                        - match:
                            path: /stats/prometheus
                          route:
                            cluster: {{ $adminCluster }}
                http_filters:
                  - name: envoy.filters.http.router
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
    - name: {{ $ready }}
      stat_prefix: {{ $ready }}
      drain_type: MODIFY_ONLY
      address:
        socket_address:
          address: 0.0.0.0
          port_value: {{ int64 .Values.readinessListener.port }}
      filter_chains:
        - filters:
            - name: envoy.filters.network.http_connection_manager
              typed_config:
                "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
                stat_prefix: {{ $ready }}
                codec_type: AUTO
                # Load balancers' default checks are often HTTP/1.0 without a Host header (HAProxy's
                # `option httpchk`, older hardware balancers): Envoy would answer them 426.
                http_protocol_options:
                  accept_http_10: true
                  default_host_for_http_10: {{ $ready }}
                route_config:
                  name: {{ $ready }}
                  virtual_hosts:
                    - name: {{ $ready }}
                      domains: ["*"]
                      routes:
                        # Liveness: answered by Envoy's router whether or not the health check failed.
                        - match:
                            path: {{ .Values.readinessListener.livenessPath | quote }}
                          direct_response:
                            status: 200
                            body:
                              inline_string: "live\n"
                http_filters:
                  # Readiness: 200 until POST /healthcheck/fail, 503 from then on, on the chart's path
                  # and on `/`, the path balancers check unless told otherwise (any method).
                  {{- range uniq (list .Values.readinessListener.path "/") }}
                  - name: envoy.filters.http.health_check
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.health_check.v3.HealthCheck
                      pass_through_mode: false
                      headers:
                        - name: ":path"
                          string_match:
                            exact: {{ . | quote }}
                  {{- end }}
                  - name: envoy.filters.http.router
                    typed_config:
                      "@type": type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
    {{- with include "envoy-shutdown-manager.userListeners" . | fromJsonArray }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  clusters:
    - name: {{ $adminCluster }}
      type: STATIC
      connect_timeout: 1s
      load_assignment:
        cluster_name: {{ $adminCluster }}
        endpoints:
          - lb_endpoints:
              - endpoint:
                  address:
                    {{- include "envoy-shutdown-manager.adminAddressBootstrap" . | nindent 20 }}
    {{- with .Values.clusters }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- with .Values.bootstrapExtra }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Events (events.enabled): the manager creates one Event on the pod per drain, with a token of the
chart's ServiceAccount mounted into the shutdown-manager container only. Envoy gets no token.
*/}}

{{/*
The ServiceAccount the pods run as: the user's, else the chart's own when events are on, else the
namespace's `default`; always rendered. The API server keeps the deprecated `serviceAccount` alias
beside `serviceAccountName` and fills either from the other, so an upgrade that merely drops
`serviceAccountName` keeps the old account, and once helm has deleted it no pod can be created.
*/}}
{{- define "envoy-shutdown-manager.serviceAccountName" -}}
{{- if .Values.serviceAccountName }}{{ .Values.serviceAccountName }}{{ else if .Values.events.enabled }}{{ include "envoy-shutdown-manager.fullname" . }}{{ else }}default{{ end }}
{{- end }}

{{/* Where the in-cluster convention looks for the token and the CA. */}}
{{- define "envoy-shutdown-manager.serviceAccountDir" -}}/var/run/secrets/kubernetes.io/serviceaccount{{- end }}

{{/* The switch and the pod, from the downward API. */}}
{{- define "envoy-shutdown-manager.eventsEnv" -}}
- name: ENVOY_SHUTDOWN_EVENTS
  value: "true"
- name: ENVOY_SHUTDOWN_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: ENVOY_SHUTDOWN_POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: ENVOY_SHUTDOWN_POD_UID
  valueFrom:
    fieldRef:
      fieldPath: metadata.uid
- name: ENVOY_SHUTDOWN_NODE_NAME
  valueFrom:
    fieldRef:
      fieldPath: spec.nodeName
{{- end }}

{{/* What kubelet would mount with automountServiceAccountToken, for one container only. */}}
{{- define "envoy-shutdown-manager.eventsVolume" -}}
- name: kube-api-access
  projected:
    defaultMode: 0444
    sources:
      - serviceAccountToken:
          path: token
          expirationSeconds: 3607
      - configMap:
          name: kube-root-ca.crt
          items:
            - key: ca.crt
              path: ca.crt
      - downwardAPI:
          items:
            - path: namespace
              fieldRef:
                fieldPath: metadata.namespace
{{- end }}

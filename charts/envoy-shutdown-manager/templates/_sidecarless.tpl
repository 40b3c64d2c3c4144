{{/*
The pod's mode, and what sidecar-less mode (mode: sidecarless) adds to it. Templates ask these
helpers, never .Values.mode or .Values.nativeSidecar alone: nativeSidecar means something only in
sidecar mode (the validation refuses it with sidecarless).

Sidecar-less: nothing runs beside Envoy. Envoy's own exec preStop hook runs `shutdown
--no-ready-file` from a copy of this project's executable, started through the dynamic loader and
libraries that come with it, so it needs nothing from the Envoy image: no shell, no libc of its own.
kubelet sends Envoy SIGTERM when the hook returns. The copy comes from
  - copy: an init container runs `envoy-shutdown-manager install <mount>` into an emptyDir, which
    lays out <mount>/current/{envoy-shutdown-manager,lib/} and proves the copy runs;
  - imageVolume: this project's image itself, mounted as an `image` volume and run in place.
Either way the volume is mounted at the same path, read-only, in Envoy's container.
*/}}

{{/* "true" in sidecar-less mode, empty otherwise. */}}
{{- define "envoy-shutdown-manager.sidecarless" -}}
{{- if eq .Values.mode "sidecarless" }}true{{ end }}
{{- end }}

{{/* "true" when the manager is a classic sidecar (a regular container with its own exec hook). */}}
{{- define "envoy-shutdown-manager.classicSidecar" -}}
{{- if and (not (include "envoy-shutdown-manager.sidecarless" .)) (not .Values.nativeSidecar) }}true{{ end }}
{{- end }}

{{/* "true" when the manager is a native sidecar (an init container with restartPolicy Always). */}}
{{- define "envoy-shutdown-manager.nativeSidecar" -}}
{{- if and (not (include "envoy-shutdown-manager.sidecarless" .)) .Values.nativeSidecar }}true{{ end }}
{{- end }}

{{/* Where the executable's volume is mounted: in the install init container and, read-only, in Envoy's. */}}
{{- define "envoy-shutdown-manager.sidecarlessMountPath" -}}/esm{{- end }}
{{- define "envoy-shutdown-manager.sidecarlessVolume" -}}shutdown-manager{{- end }}

{{/* The smallest emptyDir that holds the copy (about 111 MB, 106 MiB), in MiB. */}}
{{- define "envoy-shutdown-manager.sidecarlessMinSizeMi" -}}128{{- end }}

{{/* The Kubernetes version from which `image` volumes are beta (1.31 and 1.32 had an alpha API). */}}
{{- define "envoy-shutdown-manager.imageVolumeKubeVersion" -}}1.33.0-0{{- end }}

{{/*
Envoy's preStop command, as JSON: the loader, the library path, the executable, then `shutdown
--no-ready-file`. Every setting comes from the Envoy container's ENVOY_SHUTDOWN_* variables, so
the command stays short, and a manual `kubectl exec -c envoy -- <the same command>` drains alike.
  - copy: exactly what `install` prints for this mount path (its last line), plus --no-ready-file.
  - imageVolume: the image's own layout under the mount (the loader and libraries in
    /lib/x86_64-linux-gnu, the loader named there and not through /lib64, whose symlink is not
    meant to be followed from another root filesystem; /usr/lib/x86_64-linux-gnu too, where a
    Debian-based build of the image keeps libstdc++; the executable in /usr/local/bin).
*/}}
{{- define "envoy-shutdown-manager.hookCommand" -}}
{{- $mount := include "envoy-shutdown-manager.sidecarlessMountPath" . }}
{{- if eq .Values.sidecarless.source "imageVolume" }}
{{- $lib := printf "%s/lib/x86_64-linux-gnu" $mount }}
{{- list (printf "%s/ld-linux-x86-64.so.2" $lib) "--library-path" (printf "%s:%s/usr/lib/x86_64-linux-gnu" $lib $mount) (printf "%s/usr/local/bin/envoy-shutdown-manager" $mount) "shutdown" "--no-ready-file" | toJson }}
{{- else }}
{{- $current := printf "%s/current" $mount }}
{{- list (printf "%s/lib/ld-linux-x86-64.so.2" $current) "--library-path" (printf "%s/lib" $current) (printf "%s/envoy-shutdown-manager" $current) "shutdown" "--no-ready-file" | toJson }}
{{- end }}
{{- end }}

{{/* The drain's environment in Envoy's container: what the hook and a manual exec read. */}}
{{- define "envoy-shutdown-manager.hookEnv" -}}
{{- include "envoy-shutdown-manager.drainEnv" . }}
- name: ENVOY_SHUTDOWN_LOG_LEVEL
  value: {{ .Values.shutdownManager.logLevel | quote }}
- name: ENVOY_SHUTDOWN_LOG_FORMAT
  value: {{ .Values.shutdownManager.logFormat | quote }}
{{- end }}

{{/* The init container that lays out the copy (source copy): run to completion before Envoy starts. */}}
{{- define "envoy-shutdown-manager.installContainer" -}}
{{- $sm := .Values.shutdownManager }}
{{- $mount := include "envoy-shutdown-manager.sidecarlessMountPath" . -}}
- name: install-shutdown-manager
  image: {{ include "envoy-shutdown-manager.image" (dict "image" $sm.image "defaultTag" .Chart.AppVersion) | quote }}
  imagePullPolicy: {{ $sm.image.pullPolicy }}
  # Copies the executable, its loader and its libraries (0755/0644: any UID may run them), runs the
  # copy once, and prints the command Envoy's preStop hook below uses. Re-running keeps a good copy.
  args: [install, {{ $mount }}]
  {{- with $sm.resources }}
  resources:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $sm.securityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  volumeMounts:
    - name: {{ include "envoy-shutdown-manager.sidecarlessVolume" . }}
      mountPath: {{ $mount }}
{{- end }}

{{/* The volume holding the executable: the emptyDir the copy goes to, or the project's image itself. */}}
{{- define "envoy-shutdown-manager.sidecarlessVolumeSpec" -}}
{{- $sm := .Values.shutdownManager -}}
- name: {{ include "envoy-shutdown-manager.sidecarlessVolume" . }}
  {{- if eq .Values.sidecarless.source "imageVolume" }}
  # The image, read-only, as a volume (Kubernetes 1.33+, ImageVolume feature): no copy, no init container.
  image:
    reference: {{ include "envoy-shutdown-manager.image" (dict "image" $sm.image "defaultTag" .Chart.AppVersion) | quote }}
    pullPolicy: {{ $sm.image.pullPolicy }}
  {{- else }}
  emptyDir:
    sizeLimit: {{ .Values.sidecarless.sizeLimit }}
  {{- end }}
{{- end }}

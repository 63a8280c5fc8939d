{{/* The name of every object: the release's name when it says winplace, else "<release>-winplace". */}}
{{- define "winplace.fullname" -}}
{{- if contains "winplace" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-winplace" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "winplace.labels" -}}
app.kubernetes.io/name: winplace
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The labels that select one component's pods: (dict "root" . "component" "dashboard"). */}}
{{- define "winplace.selector" -}}
app.kubernetes.io/name: winplace
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "winplace.image" -}}
{{- $tag := .Values.image.tag | default (printf "v%s" .Chart.AppVersion) -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "winplace.module" -}}
{{- $m := .Values.kubewarden.module -}}
{{- if $m.digest -}}
{{- printf "registry://%s@%s" $m.repository $m.digest -}}
{{- else -}}
{{- printf "registry://%s:%s" $m.repository ($m.tag | default (printf "v%s" .Chart.AppVersion)) -}}
{{- end -}}
{{- end -}}

{{/*
The settings every component reads: the `settings` block, with the platform preset filling what it leaves
(the rules' own presets for aks, eks, gke and openshift: docs/reference/platforms.md §6; rke2: no Windows
taint, docs/deploy.md), the placement Lease named where the controller takes it (this namespace unless
the settings say otherwise), so that the policy's gate and the controller agree, and, with the Kubewarden
policy, its admission switches (`mutate`, `contextAware`, `registryAware`) from the `kubewarden` values:
one document, the same for the dashboard, the controller and the policy.
*/}}
{{- define "winplace.settings" -}}
{{- $s := deepCopy (.Values.settings | default dict) -}}
{{- $platform := .Values.platform | default "" -}}
{{- if and (has $platform (list "aks" "eks" "gke" "openshift")) (not (hasKey $s "platform")) -}}
{{- $_ := set $s "platform" $platform -}}
{{- end -}}
{{- if and (eq $platform "rke2") (not (hasKey $s "windowsTaints")) -}}
{{- $_ := set $s "windowsTaints" (list) -}}
{{- end -}}
{{- if not (hasKey $s "placementLeaseNamespace") -}}
{{- $_ := set $s "placementLeaseNamespace" .Release.Namespace -}}
{{- end -}}
{{- if not (hasKey $s "placementLeaseName") -}}
{{- $_ := set $s "placementLeaseName" "winplace-placer" -}}
{{- end -}}
{{- if .Values.kubewarden.enabled -}}
{{- $_ := set $s "mutate" .Values.kubewarden.mutating -}}
{{- $_ := set $s "contextAware" .Values.kubewarden.contextAware -}}
{{- $_ := set $s "registryAware" .Values.kubewarden.registryAware -}}
{{- end -}}
{{- toYaml $s -}}
{{- end -}}

{{/*
What the dashboard's and the controller's pods share: Linux nodes of the image's architectures, spread over
nodes and zones, a security context that Pod Security `restricted` and OpenShift's `restricted-v2` SCC
both admit (non-root without a fixed UID: the image's numeric user, or the namespace's range on OpenShift;
docs/reference/server-deployment.md). (dict "root" . "component" "dashboard" "values" .Values.dashboard)
*/}}
{{- define "winplace.podPlacement" -}}
os:
  name: linux
nodeSelector:
  kubernetes.io/os: linux
  {{- with .values.nodeSelector }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
      - matchExpressions:
        - key: kubernetes.io/arch
          operator: In
          values:
          {{- toYaml .root.Values.architectures | nindent 10 }}
topologySpreadConstraints:
- maxSkew: 1
  topologyKey: kubernetes.io/hostname
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "winplace.selector" . | nindent 6 }}
- maxSkew: 1
  topologyKey: topology.kubernetes.io/zone
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "winplace.selector" . | nindent 6 }}
{{- with .values.tolerations }}
tolerations:
{{- toYaml . | nindent 0 }}
{{- end }}
securityContext:
  runAsNonRoot: true
  seccompProfile:
    type: RuntimeDefault
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 0 }}
{{- end }}
volumes:
- name: settings
  configMap:
    name: {{ include "winplace.fullname" .root }}-settings
{{- end -}}

{{/* The container's part both components share: image, security context, settings, probes. */}}
{{- define "winplace.container" -}}
image: {{ include "winplace.image" .root }}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
ports:
- name: http
  containerPort: 8080
  protocol: TCP
- name: probes
  containerPort: 8081
  protocol: TCP
- name: metrics
  containerPort: {{ .root.Values.metrics.port }}
  protocol: TCP
env:
- name: RUST_LOG
  value: {{ .root.Values.logLevel | quote }}
- name: WINPLACE_LOG_FORMAT
  value: {{ .root.Values.logFormat | quote }}
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
volumeMounts:
- name: settings
  mountPath: /etc/winplace
  readOnly: true
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  runAsNonRoot: true
  capabilities:
    drop: ["ALL"]
resources:
  {{- toYaml .values.resources | nindent 2 }}
# Every probe says how long it waits (the default is 1 s) and asks the probe listener, which no load on
# 8080 can delay (docs/reference/server-deployment.md).
livenessProbe:
  httpGet:
    path: /healthz
    port: probes
  timeoutSeconds: 5
  periodSeconds: 10
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: probes
  timeoutSeconds: 5
  periodSeconds: 5
  failureThreshold: 2
startupProbe:
  httpGet:
    path: /healthz
    port: probes
  timeoutSeconds: 5
  periodSeconds: 2
  failureThreshold: 30
{{- end -}}

{{/* The NetworkPolicy rules both components share: DNS and the API server (443 or 6443) out. */}}
{{- define "winplace.egress" -}}
- ports:
  - protocol: UDP
    port: 53
  - protocol: TCP
    port: 53
- ports:
  - protocol: TCP
    port: 443
  - protocol: TCP
    port: 6443
{{- end -}}

{{- define "winplace.metricsIngress" -}}
- from:
  - namespaceSelector:
      matchLabels:
        winplace.io/metrics-access: "true"
  ports:
  - protocol: TCP
    port: {{ .Values.metrics.port }}
{{- end -}}

{{/* The chart's name (nameOverride), trimmed to what a Kubernetes name may hold. */}}
{{- define "bursar.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's base name: fullnameOverride, else the release name, with the chart's name
     after it unless the release name holds it already (release "bursar": "bursar"). */}}
{{- define "bursar.base" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "bursar.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's full name: the base name and the component. */}}
{{- define "bursar.fullname" -}}
{{- printf "%s-%s" (include "bursar.base" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "bursar.labels" -}}
app.kubernetes.io/name: {{ include "bursar.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/component: {{ .component }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* The labels a component's pods are selected by. */}}
{{- define "bursar.selector" -}}
app.kubernetes.io/name: {{ include "bursar.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "bursar.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}
{{- end -}}

{{/* The pod security context: non-root, no privilege escalation, a read-only root. */}}
{{- define "bursar.podSecurity" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "bursar.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{/* The NATS credential file of .role in the credentials Secret (nats.auth). */}}
{{- define "bursar.natsCredsFile" -}}
{{ .role }}.{{ eq .root.Values.nats.auth "creds" | ternary "creds" "nk" }}
{{- end -}}

{{/* Environment every program shares: NATS, logging; .role picks the NATS credentials. */}}
{{- define "bursar.env" -}}
- name: BURSAR_NATS
  value: {{ .root.Values.nats.url | quote }}
{{- if eq .root.Values.nats.auth "creds" }}
- name: BURSAR_NATS_CREDS
  value: /var/run/secrets/bursar/nats/{{ include "bursar.natsCredsFile" . }}
{{- else if eq .root.Values.nats.auth "nkey" }}
- name: BURSAR_NATS_NKEY
  value: /var/run/secrets/bursar/nats/{{ include "bursar.natsCredsFile" . }}
{{- end }}
{{- if .root.Values.nats.insecure }}
- name: BURSAR_NATS_INSECURE
  value: "true"
{{- end }}
{{- if .root.Values.nats.tlsCASecret }}
- name: BURSAR_NATS_TLS_CA
  value: /var/run/secrets/bursar/nats-ca/ca.crt
{{- end }}
- name: BURSAR_LOG_FORMAT
  value: {{ .root.Values.logFormat | quote }}
- name: BURSAR_LOG_LEVEL
  value: {{ .root.Values.logLevel | quote }}
{{- end -}}

{{/* ClickHouse: the DSN and the password file. */}}
{{- define "bursar.clickhouseEnv" -}}
- name: BURSAR_CLICKHOUSE
  value: {{ .Values.clickhouse.dsn | quote }}
- name: BURSAR_CLICKHOUSE_PASSWORD_FILE
  value: /var/run/secrets/bursar/clickhouse/password
{{- end -}}

{{/* The keys of the Slack Secret a component reads: the bot token; for the arbiter also the
     app-level token (Socket Mode) or the signing secret (HTTP). */}}
{{- define "bursar.slackKeys" -}}
{{- $keys := list "bot-token" }}
{{- if .arbiter }}
{{- $keys = append $keys (eq .root.Values.slack.mode "http" | ternary "signing-secret" "app-token") }}
{{- end }}
{{- toJson $keys }}
{{- end -}}

{{/* Slack: the channel and the token files, when a Secret is named; .arbiter adds the way
     approvals come back. */}}
{{- define "bursar.slackEnv" -}}
{{- if .root.Values.slack.secret }}
- name: BURSAR_SLACK_CHANNEL
  value: {{ .root.Values.slack.channel | quote }}
{{- range include "bursar.slackKeys" . | fromJsonArray }}
- name: BURSAR_SLACK_{{ . | upper | replace "-" "_" }}_FILE
  value: /var/run/secrets/bursar/slack/{{ . }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Mounts of the shared secrets; .slack and .clickhouse say which the component needs. */}}
{{- define "bursar.secretMounts" -}}
{{- if ne .root.Values.nats.auth "none" }}
- name: nats-creds
  mountPath: /var/run/secrets/bursar/nats
  readOnly: true
{{- end }}
{{- if .root.Values.nats.tlsCASecret }}
- name: nats-ca
  mountPath: /var/run/secrets/bursar/nats-ca
  readOnly: true
{{- end }}
{{- if .clickhouse }}
- name: clickhouse
  mountPath: /var/run/secrets/bursar/clickhouse
  readOnly: true
{{- end }}
{{- if and .slack .root.Values.slack.secret }}
- name: slack
  mountPath: /var/run/secrets/bursar/slack
  readOnly: true
{{- end }}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* The secrets' volumes, each with only the keys the component reads: a key missing from
     its Secret stops the pod before it starts, with an event naming the key. */}}
{{- define "bursar.secretVolumes" -}}
{{- if ne .root.Values.nats.auth "none" }}
- name: nats-creds
  secret:
    secretName: {{ .root.Values.nats.credsSecret }}
    defaultMode: 0400
    items:
      - {key: {{ include "bursar.natsCredsFile" . }}, path: {{ include "bursar.natsCredsFile" . }}}
{{- end }}
{{- if .root.Values.nats.tlsCASecret }}
- name: nats-ca
  secret:
    secretName: {{ .root.Values.nats.tlsCASecret }}
{{- end }}
{{- if .clickhouse }}
- name: clickhouse
  secret:
    secretName: {{ .root.Values.clickhouse.passwordSecret }}
    defaultMode: 0400
    items:
      - {key: password, path: password}
{{- end }}
{{- if and .slack .root.Values.slack.secret }}
- name: slack
  secret:
    secretName: {{ .root.Values.slack.secret }}
    defaultMode: 0400
    items:
      {{- range include "bursar.slackKeys" . | fromJsonArray }}
      - {key: {{ . }}, path: {{ . }}}
      {{- end }}
{{- end }}
- name: tmp
  emptyDir: {}
{{- end -}}

{{/* The probes on the metrics port. */}}
{{- define "bursar.probes" -}}
startupProbe:
  httpGet: {path: /livez, port: metrics}
  periodSeconds: 2
  failureThreshold: 150
livenessProbe:
  httpGet: {path: /livez, port: metrics}
  periodSeconds: 10
  timeoutSeconds: 3
readinessProbe:
  httpGet: {path: /readyz, port: metrics}
  periodSeconds: 10
  timeoutSeconds: 3
{{- end -}}


{{/* The extension points of a pod, each the chart-wide value and then the component's own
     (.v): extra labels and annotations (the component's win), ... */}}
{{- define "bursar.podLabels" -}}
{{- with merge (deepCopy (.v.podLabels | default dict)) (.root.Values.podLabels | default dict) }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{- define "bursar.podAnnotations" -}}
{{- with merge (deepCopy (.v.podAnnotations | default dict)) (.root.Values.podAnnotations | default dict) }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{/* ... the priority class and the topology spread constraints (the component's, else the
     chart-wide ones), each constraint selecting the component's pods unless it says whom, ... */}}
{{- define "bursar.podScheduling" -}}
{{- with .v.priorityClassName | default .root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- $selector := include "bursar.selector" .c | fromYaml }}
{{- with .v.topologySpreadConstraints | default .root.Values.topologySpreadConstraints }}
{{- $constraints := list }}
{{- range . }}
{{- $constraints = append $constraints (merge (dict) . (dict "labelSelector" (dict "matchLabels" $selector))) }}
{{- end }}
topologySpreadConstraints:
  {{- toYaml $constraints | nindent 2 }}
{{- end }}
{{- end -}}

{{/* ... environment variables, after the chart's own, and whole Secrets or ConfigMaps as
     environment (envFrom), ... */}}
{{- define "bursar.extraEnv" -}}
{{- with concat (.root.Values.extraEnv | default list) (.v.extraEnv | default list) }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{- define "bursar.envFrom" -}}
{{- with concat (.root.Values.envFrom | default list) (.v.envFrom | default list) }}
envFrom:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* ... and volumes with their mounts: webhook secrets, price-API keys, contract and catalog
     files the configs name. */}}
{{- define "bursar.extraVolumeMounts" -}}
{{- with concat (.root.Values.extraVolumeMounts | default list) (.v.extraVolumeMounts | default list) }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{- define "bursar.extraVolumes" -}}
{{- with concat (.root.Values.extraVolumes | default list) (.v.extraVolumes | default list) }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{/* The collector's ServiceAccount: the one the chart makes, or collector.serviceAccount.name. */}}
{{- define "bursar.collectorServiceAccount" -}}
{{- .Values.collector.serviceAccount.name | default (include "bursar.fullname" (dict "root" . "component" "collector")) }}
{{- end -}}

{{/* The arbiter's --slack-listen: in slack.mode http, arbiter.slackListen (default :8080);
     empty otherwise, which with an app token is Socket Mode. */}}
{{- define "bursar.slackListen" -}}
{{- if and .Values.slack.secret (eq .Values.slack.mode "http") }}
{{- .Values.arbiter.slackListen | default ":8080" }}
{{- end }}
{{- end -}}

{{/* The chart's name, trimmed to what a Kubernetes name may hold. */}}
{{- define "bursar.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* A component's full name: release-chart-component. */}}
{{- define "bursar.fullname" -}}
{{- printf "%s-%s" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
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

{{/* Environment every program shares: NATS, logging; .role picks the NATS credentials. */}}
{{- define "bursar.env" -}}
- name: BURSAR_NATS
  value: {{ .root.Values.nats.url | quote }}
- name: BURSAR_NATS_CREDS
  value: /var/run/secrets/bursar/nats/{{ .role }}.creds
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

{{/* Slack: the channel and the token files, when a Secret is named. */}}
{{- define "bursar.slackEnv" -}}
{{- if .Values.slack.secret }}
- name: BURSAR_SLACK_CHANNEL
  value: {{ .Values.slack.channel | quote }}
- name: BURSAR_SLACK_BOT_TOKEN_FILE
  value: /var/run/secrets/bursar/slack/bot-token
- name: BURSAR_SLACK_SIGNING_SECRET_FILE
  value: /var/run/secrets/bursar/slack/signing-secret
{{- end }}
{{- end -}}

{{/* Mounts of the shared secrets; .slack and .clickhouse say which the component needs. */}}
{{- define "bursar.secretMounts" -}}
- name: nats-creds
  mountPath: /var/run/secrets/bursar/nats
  readOnly: true
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

{{- define "bursar.secretVolumes" -}}
- name: nats-creds
  secret:
    secretName: {{ .root.Values.nats.credsSecret }}
    defaultMode: 0400
    items:
      - {key: {{ .role }}.creds, path: {{ .role }}.creds}
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

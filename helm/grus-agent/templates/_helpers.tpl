{{- define "grus-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped name of every object (the node daemon's objects add "-node"). */}}
{{- define "grus-agent.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 58 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 58 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 58 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "grus-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "grus-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "grus-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "grus-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: grus
grus.io/cluster: {{ .Values.cluster.id | quote }}
{{- end }}

{{- define "grus-agent.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "grus-agent.serviceAccount" -}}
{{- if .Values.serviceAccount.create }}{{ include "grus-agent.fullname" . }}{{ else }}{{ required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}{{ end }}
{{- end }}

{{- define "grus-agent.nodeServiceAccount" -}}
{{- if .Values.serviceAccount.create }}{{ include "grus-agent.fullname" . }}-node{{ else }}{{ required "serviceAccount.nodeName is required when serviceAccount.create is false" .Values.serviceAccount.nodeName }}{{ end }}
{{- end }}

{{/* The Secret with the Redis ACL credentials; empty when there is none (no AUTH). */}}
{{- define "grus-agent.redisSecret" -}}
{{- if .Values.redis.existingSecret }}{{ .Values.redis.existingSecret }}{{ else if .Values.redis.password }}{{ include "grus-agent.fullname" . }}-redis{{ end }}
{{- end }}

{{- define "grus-agent.restrictedSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: { drop: [ALL] }
{{- end }}

{{/* kfctl.replicas (list $ workload json): `replicas.<workload>` when it is a number. */}}
{{- define "kfctl.replicas" -}}
{{- $v := (index . 0).Values -}}
{{- $replicas := toJson (get ($v.replicas | default dict) (index . 1)) -}}
{{- if regexMatch "^-?[0-9]" $replicas -}}{{- $replicas -}}{{- else -}}{{- index . 2 -}}{{- end -}}
{{- end -}}

{{/* kfctl.resources (list $ workload container json): `resources.<workload>.<container>`
     when not empty. */}}
{{- define "kfctl.resources" -}}
{{- $v := (index . 0).Values -}}
{{- $workload := get ($v.resources | default dict) (index . 1) -}}
{{- $resources := "" -}}
{{- if kindIs "map" $workload -}}{{- $resources = get $workload (index . 2) -}}{{- end -}}
{{- if not (empty $resources) -}}{{- toJson $resources -}}{{- else -}}{{- index . 3 -}}{{- end -}}
{{- end -}}

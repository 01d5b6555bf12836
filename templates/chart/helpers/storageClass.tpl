{{/* kfctl.storageClass (list $ json): a claim's `storageClassName`: `global.storageClass`
     when it is a non-empty string, else the upstream value (`""`: none). */}}
{{- define "kfctl.storageClass" -}}
{{- $v := (index . 0).Values -}}
{{- $class := get ($v.global | default dict) "storageClass" -}}
{{- if and (kindIs "string" $class) $class -}}
{{- toJson $class -}}
{{- else -}}
{{- index . 1 -}}
{{- end -}}
{{- end -}}

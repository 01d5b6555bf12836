{{/* kfctl.storageClass (list $ json): a claim's `storageClassName`: `global.storageClass`
     when it is a non-empty string, else the upstream value (`""`: none). */}}
{{- define "kfctl.storageClass" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $class := get $global "storageClass" -}}
{{- if and (kindIs "string" $class) $class -}}
{{- toJson $class -}}
{{- else -}}
{{- index . 1 -}}
{{- end -}}
{{- end -}}

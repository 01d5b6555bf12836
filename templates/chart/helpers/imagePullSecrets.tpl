{{/* kfctl.pullSecrets (list $ json): `global.imagePullSecrets` appended as {name: ...}. */}}
{{- define "kfctl.pullSecrets" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $raw := index . 1 -}}
{{- $names := get $global "imagePullSecrets" -}}
{{- if and (kindIs "slice" $names) $names (or (eq $raw "") (hasPrefix "[" $raw)) -}}
{{- $list := list -}}
{{- if $raw -}}{{- $list = fromJsonArray $raw -}}{{- end -}}
{{- range $names -}}{{- $list = append $list (dict "name" .) -}}{{- end -}}
{{- toJson $list -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

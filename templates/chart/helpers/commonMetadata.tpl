{{/* kfctl.commonMetadata (list $ valueName json): `global.commonLabels` or
     `global.commonAnnotations` merged over the object's (they win). */}}
{{- define "kfctl.commonMetadata" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $raw := index . 2 -}}
{{- $extra := get $global (index . 1) -}}
{{- if and (kindIs "map" $extra) (not (empty $extra)) (or (eq $raw "") (hasPrefix "{" $raw)) -}}
{{- $own := dict -}}
{{- if $raw -}}{{- $own = fromJson $raw -}}{{- end -}}
{{- toJson (merge (deepCopy $extra) $own) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

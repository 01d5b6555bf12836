{{/* kfctl.globals (list $ into): fills the map `into` with the chart's `global` values: its
     `global:` coalesced over `exportedGlobal:` (the globals given at export, which stand
     apart because Helm copies `global:` defaults into every subchart, out of a null's reach:
     helm/helm#6277) as Helm coalesces values over defaults. Every helper reads `global` so. */}}
{{- define "kfctl.globals" -}}
{{- $v := (index . 0).Values -}}
{{- $_ := include "kfctl.coalesce" (list (index . 1) ($v.global | default dict) ($v.exportedGlobal | default dict)) -}}
{{- end -}}

{{/* kfctl.coalesce (list into values defaults): fills the map `into` with `values` over
     `defaults`, as Helm coalesces them: a default the values lack is added, maps merge key by
     key, a null removes the default it stands on, anything else replaces it. */}}
{{- define "kfctl.coalesce" -}}
{{- $into := index . 0 -}}
{{- $values := index . 1 -}}
{{- range $key, $value := $values -}}
{{- $_ := set $into $key $value -}}
{{- end -}}
{{- range $key, $default := index . 2 -}}
{{- $value := get $values $key -}}
{{- if not (hasKey $values $key) -}}
{{- $_ := set $into $key $default -}}
{{- else if kindIs "invalid" $value -}}
{{- $_ := unset $into $key -}}
{{- else if and (kindIs "map" $value) (kindIs "map" $default) -}}
{{- $inner := dict -}}
{{- $_ := include "kfctl.coalesce" (list $inner $value $default) -}}
{{- $_ := set $into $key $inner -}}
{{- end -}}
{{- end -}}
{{- end -}}

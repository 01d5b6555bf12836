{{/* kfctl.envItems (list $ workload container (list taken...)): `env.<workload>.<container>`
     as a JSON list, the entries appended to upstream's env; a name upstream's container has
     (taken) fails the render, as kfctl-rs refuses it. */}}
{{- define "kfctl.envItems" -}}
{{- $v := (index . 0).Values -}}
{{- $workload := get ($v.env | default dict) (index . 1) -}}
{{- $extra := list -}}
{{- if kindIs "map" $workload -}}{{- $extra = get $workload (index . 2) -}}{{- end -}}
{{- if not (kindIs "slice" $extra) -}}{{- $extra = list -}}{{- end -}}
{{- range $extra -}}
{{- if and (kindIs "map" .) (has (toString (get . "name")) (index $ 3)) -}}
{{- fail (printf "values: `env.%s.%s` sets `%s`, which upstream's container already has; extra env takes new names only" (index $ 1) (index $ 2) (get . "name")) -}}
{{- end -}}
{{- end -}}
{{- toJson $extra -}}
{{- end -}}

{{/* kfctl.env (list $ workload container (list)): the whole `env` of a container upstream
     gives none: kfctl.envItems when not empty, else "" (no field). */}}
{{- define "kfctl.env" -}}
{{- $items := include "kfctl.envItems" . -}}
{{- if ne $items "[]" -}}{{- $items -}}{{- end -}}
{{- end -}}

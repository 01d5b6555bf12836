{{/* kfctl.resources (list $ workload container json): `resources.<workload>.<container>`
     when not empty. */}}
{{- define "kfctl.resources" -}}
{{- $v := (index . 0).Values -}}
{{- $workload := get ($v.resources | default dict) (index . 1) -}}
{{- $resources := "" -}}
{{- if kindIs "map" $workload -}}{{- $resources = get $workload (index . 2) -}}{{- end -}}
{{- if not (empty $resources) -}}{{- toJson $resources -}}{{- else -}}{{- index . 3 -}}{{- end -}}
{{- end -}}

{{/* kfctl.runtimeResources (list $ json): `runtimes.resources` merged over upstream's (the
     main container of a users' runtime, charts/catalog.yaml `podScopes`): a GPU limit keeps
     the runtime's own CPU and memory, as a workload's `resources` merge over its defaults. */}}
{{- define "kfctl.runtimeResources" -}}
{{- $runtimes := (index . 0).Values.runtimes | default dict -}}
{{- $resources := "" -}}
{{- if kindIs "map" $runtimes -}}{{- $resources = get $runtimes "resources" -}}{{- end -}}
{{- if and (kindIs "map" $resources) (not (empty $resources)) -}}
{{- $base := dict -}}
{{- if index . 1 -}}{{- $base = fromJson (index . 1) -}}{{- end -}}
{{- toJson (mergeOverwrite $base (deepCopy $resources)) -}}
{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

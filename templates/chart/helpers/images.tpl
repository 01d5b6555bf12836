{{/* kfctl.image (list $ key image): `images.<key>` when set, then `global.imageRegistry`
     (the registry replaces the image's own, kept are path, tag and digest). */}}
{{- define "kfctl.image" -}}
{{- $v := (index . 0).Values -}}
{{- $image := index . 2 -}}
{{- with index . 1 -}}
{{- $override := get ($v.images | default dict) . -}}
{{- if and (kindIs "string" $override) $override -}}{{- $image = $override -}}{{- end -}}
{{- end -}}
{{- $registry := get ($v.global | default dict) "imageRegistry" -}}
{{- if and (kindIs "string" $registry) $registry -}}
{{- $registry = regexReplaceAll "/+$" $registry "" -}}
{{- if $registry -}}
{{- $first := index (splitList "/" $image) 0 -}}
{{- if and (contains "/" $image) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $image = printf "%s/%s" $registry (trimPrefix (printf "%s/" $first) $image) -}}
{{- else -}}
{{- $image = printf "%s/%s" $registry $image -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $image -}}
{{- end -}}

{{/* kfctl.podMetadata (list $ value workload json): `<value>.<workload>` (podAnnotations or
     podLabels) merged over the pod template's map (its keys win). */}}
{{- define "kfctl.podMetadata" -}}
{{- $v := (index . 0).Values -}}
{{- $raw := index . 3 -}}
{{- $extra := get ((get $v (index . 1)) | default dict) (index . 2) -}}
{{- if and (kindIs "map" $extra) (not (empty $extra)) (or (eq $raw "") (hasPrefix "{" $raw)) -}}
{{- $pod := dict -}}
{{- if $raw -}}{{- $pod = fromJson $raw -}}{{- end -}}
{{- toJson (merge (fromJson (toJson $extra)) $pod) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

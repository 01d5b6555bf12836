{{/* kfctl.scoped (list $ name): the chart's own non-empty value, else global's, as JSON. */}}
{{- define "kfctl.scoped" -}}
{{- $v := (index . 0).Values -}}
{{- $own := get $v (index . 1) -}}
{{- if not (empty $own) -}}
{{- toJson $own -}}
{{- else -}}
{{- with get ($v.global | default dict) (index . 1) -}}{{- toJson . -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.nodeSelector (list $ json): the scoped nodeSelector merged over the pod's (it wins). */}}
{{- define "kfctl.nodeSelector" -}}
{{- $raw := index . 1 -}}
{{- $selector := include "kfctl.scoped" (list (index . 0) "nodeSelector") -}}
{{- if and (hasPrefix "{" $selector) (or (eq $raw "") (hasPrefix "{" $raw)) -}}
{{- $pod := dict -}}
{{- if $raw -}}{{- $pod = fromJson $raw -}}{{- end -}}
{{- toJson (merge (fromJson $selector) $pod) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.tolerations (list $ json): the scoped tolerations appended to the pod's. */}}
{{- define "kfctl.tolerations" -}}
{{- $raw := index . 1 -}}
{{- $tolerations := include "kfctl.scoped" (list (index . 0) "tolerations") -}}
{{- if and (hasPrefix "[" $tolerations) (or (eq $raw "") (hasPrefix "[" $raw)) -}}
{{- $pod := list -}}
{{- if $raw -}}{{- $pod = fromJsonArray $raw -}}{{- end -}}
{{- toJson (concat $pod (fromJsonArray $tolerations)) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.affinity (list $ json): the scoped affinity replaces the pod's. */}}
{{- define "kfctl.affinity" -}}
{{- with include "kfctl.scoped" (list (index . 0) "affinity") -}}{{- . -}}{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

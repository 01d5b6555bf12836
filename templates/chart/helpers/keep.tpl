{{/* kfctl.enabled (list $ isCRD): "true" when the object renders: the chart's `enabled`
     and `global.crds` ("" every object, "only" just CRDs, "skip" all but CRDs). */}}
{{- define "kfctl.enabled" -}}
{{- $v := (index . 0).Values -}}
{{- $crd := index . 1 -}}
{{- $mode := toString (get ($v.global | default dict) "crds") -}}
{{- if ne (toString (get $v "enabled")) "false" -}}
{{- if or (and (ne $mode "only") (ne $mode "skip")) (and $crd (eq $mode "only")) (and (not $crd) (eq $mode "skip")) -}}true{{- end -}}
{{- end -}}
{{- end -}}

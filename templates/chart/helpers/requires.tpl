{{/* kfctl.requires (list $ component dependencies...): fail, as kfctl-rs does, when an
     enabled component misses an enabled dependency (umbrella chart only). */}}
{{- define "kfctl.requires" -}}
{{- $v := (index . 0).Values -}}
{{- $component := index . 1 -}}
{{- if ne (toString (get (get $v $component | default dict) "enabled")) "false" -}}
{{- range (index . 2) -}}
{{- if eq (toString (get (get $v . | default dict) "enabled")) "false" -}}
{{- fail (printf "component `%s` needs %s; enable it (--set %s.enabled=true) or disable `%s`" $component . . $component) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

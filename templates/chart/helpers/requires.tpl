{{/* kfctl.requires (list $ component (list (list dependency providable)...)): fail, as kfctl-rs
     does, when an enabled component misses a dependency that is neither enabled nor provided by
     the cluster (`<dependency>.provided`), naming the ways out (umbrella chart only). */}}
{{- define "kfctl.requires" -}}
{{- $v := (index . 0).Values -}}
{{- $component := index . 1 -}}
{{- if ne (toString (get (get $v $component | default dict) "enabled")) "false" -}}
{{- range (index . 2) -}}
{{- $dep := index . 0 -}}
{{- $values := get $v $dep | default dict -}}
{{- if and (eq (toString (get $values "enabled")) "false") (ne (toString (get $values "provided")) "true") -}}
{{- $own := ternary (printf ", or use the cluster's own if it runs it (--set %s.provided=true)" $dep) "" (index . 1) -}}
{{- fail (printf "component `%s` needs %s; install it (--set %s.enabled=true)%s, or leave `%s` out (--set %s.enabled=false)" $component $dep $dep $own $component $component) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.providedGroup (list $ dependency (list member...)): `<dependency>.provided=true`
     covers its other components in kfctl-rs; Helm passes a value to one subchart only, so
     here each member must say it too (or be disabled). */}}
{{- define "kfctl.providedGroup" -}}
{{- $v := (index . 0).Values -}}
{{- $dep := index . 1 -}}
{{- if eq (toString (get (get $v $dep | default dict) "provided")) "true" -}}
{{- $left := list -}}
{{- range (index . 2) -}}
{{- $m := get $v . | default dict -}}
{{- if and (ne (toString (get $m "provided")) "true") (ne (toString (get $m "enabled")) "false") -}}
{{- $left = append $left (printf "--set %s.provided=true" .) -}}
{{- end -}}
{{- end -}}
{{- if $left -}}
{{- fail (printf "values: `%s.provided` is true, but Helm passes it to the %s chart only; say it for the rest of %s too: %s" $dep $dep $dep (join " " $left)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.absent (list $ component profile): a component this chart does not hold can only be
     disabled; enabling it fails saying how to export a chart that holds it. */}}
{{- define "kfctl.absent" -}}
{{- $c := get (index . 0).Values (index . 1) | default dict -}}
{{- if eq (toString (get $c "enabled")) "true" -}}
{{- fail (printf "values: `%s` is not in this chart (exported from profile %s), so it cannot be enabled here; export a chart that holds it: kfctl-rs chart export --profile %s --set %s.enabled=true" (index . 1) (index . 2) (index . 2) (index . 1)) -}}
{{- end -}}
{{- end -}}

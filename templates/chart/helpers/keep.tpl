{{/* kfctl.enabled (list $ isCRD [kept]): "true" when the object renders: the chart's `enabled`,
     not `provided` (the cluster runs this dependency itself) unless `kept` (one of Kubeflow's
     own objects the dependency's folders hold), and `global.crds` ("" every object, "only"
     just CRDs, "skip" all but CRDs). */}}
{{- define "kfctl.enabled" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $crd := index . 1 -}}
{{- $mode := toString (get $global "crds") -}}
{{- $kept := and (gt (len .) 2) (index . 2) -}}
{{- if and (ne (toString (get $v "enabled")) "false") (or $kept (ne (toString (get $v "provided")) "true")) -}}
{{- if or (and (ne $mode "only") (ne $mode "skip")) (and $crd (eq $mode "only")) (and (not $crd) (eq $mode "skip")) -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.existingSecret (list $ name (list (list valuePath shownPath secret…)…)): "true" when
     `global.existingSecrets` lists the Secret `name`, which then does not render; fails when
     a credential value is set whose every Secret is listed (it would be used nowhere). */}}
{{- define "kfctl.existingSecret" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $root := index . 0 -}}
{{- $listed := get $global "existingSecrets" | default list -}}
{{- if has (index . 1) $listed -}}
{{- range (index . 2) -}}
{{- $value := set (omit $root.Values "global") "global" $global -}}
{{- range splitList "." (index . 0) -}}
{{- if kindIs "map" $value -}}{{- $value = get $value . -}}{{- else -}}{{- $value = "" -}}{{- end -}}
{{- end -}}
{{- $unused := true -}}
{{- $secrets := rest (rest .) -}}
{{- range $secrets -}}{{- if not (has . $listed) -}}{{- $unused = false -}}{{- end -}}{{- end -}}
{{- if and (kindIs "string" $value) $value $unused -}}
{{- fail (printf "values: `%s` is set, but every Secret that holds it (%s) is listed in global.existingSecrets, so it would be used nowhere; put the credential in your Secret and leave `%s` empty" (index . 1) ($secrets | join ", ") (index . 1)) -}}
{{- end -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{/* kfctl.scoped (list $ name source): a scheduling value as JSON, from where the pod
     template's scope (charts/catalog.yaml `podScopes`) takes it: "scoped" the chart's own
     non-empty value, else global's; "runtimes" the chart's `runtimes.<name>` only (node
     agents take none). */}}
{{- define "kfctl.scoped" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $name := index . 1 -}}
{{- $source := index . 2 -}}
{{- $own := get $v $name -}}
{{- if eq $source "runtimes" -}}
{{- $runtimes := $v.runtimes | default dict -}}
{{- $own = "" -}}
{{- if kindIs "map" $runtimes -}}{{- $own = get $runtimes $name -}}{{- end -}}
{{- end -}}
{{- if not (empty $own) -}}
{{- toJson $own -}}
{{- else if eq $source "scoped" -}}
{{- with get $global $name -}}{{- toJson . -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.nodeSelector (list $ json source): the nodeSelector merged over the pod's (it wins). */}}
{{- define "kfctl.nodeSelector" -}}
{{- $raw := index . 1 -}}
{{- $selector := include "kfctl.scoped" (list (index . 0) "nodeSelector" (index . 2)) -}}
{{- if and (hasPrefix "{" $selector) (or (eq $raw "") (hasPrefix "{" $raw)) -}}
{{- $pod := dict -}}
{{- if $raw -}}{{- $pod = fromJson $raw -}}{{- end -}}
{{- toJson (merge (fromJson $selector) $pod) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.tolerations (list $ json source): the tolerations appended to the pod's. */}}
{{- define "kfctl.tolerations" -}}
{{- $raw := index . 1 -}}
{{- $tolerations := include "kfctl.scoped" (list (index . 0) "tolerations" (index . 2)) -}}
{{- if and (hasPrefix "[" $tolerations) (or (eq $raw "") (hasPrefix "[" $raw)) -}}
{{- $pod := list -}}
{{- if $raw -}}{{- $pod = fromJsonArray $raw -}}{{- end -}}
{{- toJson (concat $pod (fromJsonArray $tolerations)) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.affinity (list $ json source): the affinity replaces the pod's. */}}
{{- define "kfctl.affinity" -}}
{{- with include "kfctl.scoped" (list (index . 0) "affinity" (index . 2)) -}}{{- . -}}{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

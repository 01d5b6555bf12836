{{/* kfctl.resourcePolicy (list $ json): with `global.resourcePolicy: keep`, Helm's
     `helm.sh/resource-policy: keep` and Argo CD's `Delete=false,Prune=false` sync options over
     the object's annotations; the export calls it on CRDs, PVCs and Namespaces only. */}}
{{- define "kfctl.resourcePolicy" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $raw := index . 1 -}}
{{- $policy := get $global "resourcePolicy" -}}
{{- if and (kindIs "string" $policy) (eq $policy "keep") (or (eq $raw "") (hasPrefix "{" $raw)) -}}
{{- $own := dict -}}
{{- if $raw -}}{{- $own = fromJson $raw -}}{{- end -}}
{{- $_ := set $own "helm.sh/resource-policy" "keep" -}}
{{- toJson (set $own "argocd.argoproj.io/sync-options" "Delete=false,Prune=false") -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.podSecurityLevel (list $ name): `global.podSecurity.<name>` when a non-empty string. */}}
{{- define "kfctl.podSecurityLevel" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $podSecurity := get $global "podSecurity" -}}
{{- if kindIs "map" $podSecurity -}}
{{- $level := get $podSecurity (index . 1) -}}
{{- if kindIs "string" $level -}}{{- $level -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kfctl.pssNamespace (list $ json): a Namespace's PSS enforce label, when it has one, set
     to `global.podSecurity.namespaces` ("off" removes it). */}}
{{- define "kfctl.pssNamespace" -}}
{{- $raw := index . 1 -}}
{{- $level := include "kfctl.podSecurityLevel" (list (index . 0) "namespaces") -}}
{{- $label := "pod-security.kubernetes.io/enforce" -}}
{{- $labels := dict -}}
{{- if hasPrefix "{" $raw -}}{{- $labels = fromJson $raw -}}{{- end -}}
{{- if and $level (hasKey $labels $label) -}}
{{- if eq $level "off" -}}{{- $_ := unset $labels $label -}}{{- else -}}{{- $_ := set $labels $label $level -}}{{- end -}}
{{- toJson $labels -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.pssProfiles (list $ json): the PSS line of the profile controller's label config
     set to `global.podSecurity.profiles` ("off" empties it). */}}
{{- define "kfctl.pssProfiles" -}}
{{- $raw := index . 1 -}}
{{- $level := include "kfctl.podSecurityLevel" (list (index . 0) "profiles") -}}
{{- $text := (fromJson (printf "{\"v\":%s}" $raw)).v -}}
{{- if and $level (kindIs "string" $text) -}}
{{- $line := printf "pod-security.kubernetes.io/enforce: \"%s\"" (ternary "" $level (eq $level "off")) -}}
{{- toJson (regexReplaceAllLiteral "(?m)^pod-security\\.kubernetes\\.io/enforce: \"[^\\n]*" $text $line) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.credential (list $ valuePath encoding json needle prefix): a non-empty credential
     value, stored as is ("plain"), base64-encoded ("base64"), or replacing `needle` with
     `prefix` + value in the field's text ("text"). */}}
{{- define "kfctl.credential" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $value := set (omit (index . 0).Values "global") "global" $global -}}
{{- range splitList "." (index . 1) -}}
{{- if kindIs "map" $value -}}{{- $value = get $value . -}}{{- else -}}{{- $value = "" -}}{{- end -}}
{{- end -}}
{{- $encoding := index . 2 -}}
{{- $raw := index . 3 -}}
{{- if and (kindIs "string" $value) $value -}}
{{- if eq $encoding "plain" -}}
{{- toJson $value -}}
{{- else if eq $encoding "base64" -}}
{{- toJson (b64enc $value) -}}
{{- else -}}
{{- $text := (fromJson (printf "{\"v\":%s}" $raw)).v -}}
{{- if kindIs "string" $text -}}
{{- toJson (replace (index . 4) (printf "%s%s" (index . 5) $value) $text) -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.peersOff (list $ (list peer...)): the peers (sorted) an install leaves out, comma-
     joined: each whose `<peer>.enabled` is false or whose `<peer>.provided` is true. An
     object whose fields depend on other components renders the branch of this key. */}}
{{- define "kfctl.peersOff" -}}
{{- $v := (index . 0).Values -}}
{{- $off := list -}}
{{- range (index . 1) -}}
{{- $c := get $v . | default dict -}}
{{- if or (eq (toString (get $c "enabled")) "false") (eq (toString (get $c "provided")) "true") -}}
{{- $off = append $off . -}}
{{- end -}}
{{- end -}}
{{- join "," $off -}}
{{- end -}}

{{/* kfctl.inUmbrella (list $ umbrella component): "true" when the component's chart renders
     as a dependency of the umbrella chart `umbrella`, whose templates then render its objects
     that depend on other components (they see every component's values); alone (an Argo CD
     Application of this chart), it renders them itself, as with every component installed. */}}
{{- define "kfctl.inUmbrella" -}}
{{- $base := printf "/%s" (index . 0).Template.BasePath -}}
{{- if hasSuffix (printf "/%s/charts/%s/templates" (index . 1) (index . 2)) $base -}}true{{- end -}}
{{- end -}}

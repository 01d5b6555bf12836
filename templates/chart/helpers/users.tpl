{{/* kfctl.users (list $): `global.users` as JSON, each user with its namespace (given, else
     upstream's rule: `kubeflow-` + the email lowercased, `@` and `.` as `-`); `[{}]` when
     unset, so a Profile template renders upstream's demo Profile once. Fails, as kfctl-rs
     does, on a derived namespace that is no DNS-1123 label, on two users with one namespace,
     and (in Dex's chart, which sees both) beside `dex.staticUser`. */}}
{{- define "kfctl.users" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $v := (index . 0).Values -}}
{{- $users := get $global "users" -}}
{{- if and (kindIs "slice" $users) $users -}}
{{- $static := $v.staticUser | default dict -}}
{{- if and (kindIs "map" $static) (or (get $static "email") (get $static "passwordHash")) -}}
{{- fail "global.users and dex.staticUser are both set: global.users replaces the demo user that dex.staticUser changes; put that login in global.users (with passwordHash) and leave dex.staticUser empty" -}}
{{- end -}}
{{- $out := list -}}
{{- $seen := dict -}}
{{- range $i, $u := $users -}}
{{- $ns := get $u "namespace" -}}
{{- if not $ns -}}
{{- $ns = printf "kubeflow-%s" (get $u "email" | lower | replace "@" "-" | replace "." "-") -}}
{{- if or (gt (len $ns) 63) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $ns)) -}}
{{- fail (printf "global.users[%d].namespace: `%s` (derived from the email) is not a DNS-1123 label; set namespace explicitly (lowercase letters, digits and `-`, at most 63 characters)" $i $ns) -}}
{{- end -}}
{{- end -}}
{{- if hasKey $seen $ns -}}
{{- fail (printf "global.users[%d].namespace: `%s` is also users[%v]'s; every user needs a namespace of their own" $i $ns (get $seen $ns)) -}}
{{- end -}}
{{- $_ := set $seen $ns $i -}}
{{- $out = append $out (dict "email" (get $u "email") "namespace" $ns "passwordHash" (get $u "passwordHash" | default "")) -}}
{{- end -}}
{{- toJson $out -}}
{{- else -}}
[{}]
{{- end -}}
{{- end -}}

{{/* kfctl.profileUser (list $ user field json): the user's `field` (namespace, email) as
     JSON, else the upstream value (the demo Profile's). */}}
{{- define "kfctl.profileUser" -}}
{{- $value := get (index . 1) (index . 2) -}}
{{- if $value -}}{{- toJson $value -}}{{- else -}}{{- index . 3 -}}{{- end -}}
{{- end -}}

{{/* kfctl.dexUsers (list $ json): Dex's config text with the demo entry of `staticPasswords`
     replaced by one entry per user with a passwordHash (`staticPasswords: []` when none). */}}
{{- define "kfctl.dexUsers" -}}
{{- $users := include "kfctl.users" (list (index . 0)) | fromJsonArray -}}
{{- $raw := index . 1 -}}
{{- $text := (fromJson (printf "{\"v\":%s}" $raw)).v -}}
{{- if and (get (first $users) "email") (kindIs "string" $text) -}}
{{- $demo := "- email: user@example.com\n  hashFromEnv: DEX_USER_PASSWORD\n  username: user\n  userID: \"15841185641784\"\n" -}}
{{- $entries := "" -}}
{{- range $users -}}
{{- if .passwordHash -}}
{{- $q := list .email .passwordHash (first (splitList "@" .email)) .namespace -}}
{{- $entries = printf "%s- email: '%s'\n  hash: '%s'\n  username: '%s'\n  userID: '%s'\n" $entries (replace "'" "''" (index $q 0)) (replace "'" "''" (index $q 1)) (replace "'" "''" (index $q 2)) (replace "'" "''" (index $q 3)) -}}
{{- end -}}
{{- end -}}
{{- if $entries -}}
{{- toJson (replace $demo $entries $text) -}}
{{- else -}}
{{- toJson (replace (printf "staticPasswords:\n%s" $demo) "staticPasswords: []\n" $text) -}}
{{- end -}}
{{- else -}}
{{- $raw -}}
{{- end -}}
{{- end -}}

{{/* kfctl.dexDemoHash (list $ json): the demo user's hash, `""` once `global.users` is set
     (no Dex entry reads it then). */}}
{{- define "kfctl.dexDemoHash" -}}
{{- $users := include "kfctl.users" (list (index . 0)) | fromJsonArray -}}
{{- if get (first $users) "email" -}}""{{- else -}}{{- index . 1 -}}{{- end -}}
{{- end -}}

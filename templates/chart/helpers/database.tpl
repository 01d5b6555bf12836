{{/* kfctl.database (list $): `pipelines.database` (the chart's `database:`) checked as
     kfctl-rs checks it (catalog::external_store::DatabaseError, the same words), as JSON:
     {host, user, port (a string, "" when not given)}; `{}` when no external database is set. */}}
{{- define "kfctl.database" -}}
{{- $global := dict -}}{{- $_ := include "kfctl.globals" (list (index $ 0) $global) -}}
{{- $db := get (index . 0).Values "database" | default dict -}}
{{- $given := list -}}
{{- $missing := list -}}
{{- $fields := list "host" "user" "password" -}}
{{- if has "mysql-secret" (get $global "existingSecrets" | default list) -}}
{{- if get $db "user" -}}
{{- fail "pipelines.database.user: set, but mysql-secret is listed in global.existingSecrets, so the login comes from your Secret; put the user in its `username` key and leave pipelines.database.user empty" -}}
{{- end -}}
{{- $fields = list "host" -}}
{{- end -}}
{{- range $fields -}}
{{- if get $db . -}}{{- $given = append $given . -}}{{- else -}}{{- $missing = append $missing . -}}{{- end -}}
{{- end -}}
{{- $port := get $db "port" -}}
{{- $hasPort := or (kindIs "float64" $port) (kindIs "int64" $port) (kindIs "int" $port) -}}
{{- if and $hasPort (or (lt (int $port) 1) (gt (int $port) 65535)) -}}
{{- fail (printf "pipelines.database.port: %d is not a TCP port (1 to 65535)" (int $port)) -}}
{{- end -}}
{{- if $hasPort -}}{{- $given = append $given "port" -}}{{- end -}}
{{- if and $given $missing -}}
{{- fail (printf "pipelines.database: %s set but %s missing; an external database needs host, user and password together (port is optional: 3306)" (join ", " $given) (join ", " $missing)) -}}
{{- end -}}
{{- if $given -}}
{{- toJson (dict "host" (get $db "host") "user" (get $db "user") "port" (ternary (printf "%d" (int $port)) "" $hasPort)) -}}
{{- else -}}
{}
{{- end -}}
{{- end -}}

{{/* kfctl.databaseField (list $ field json): the install config's host or port key, or the
     login's username, for an external database (`field`: host, port, user); upstream's value
     otherwise, and for the port when none is given. */}}
{{- define "kfctl.databaseField" -}}
{{- $db := include "kfctl.database" (list (index . 0)) | fromJson -}}
{{- $value := get $db (index . 1) | default "" -}}
{{- if $value -}}{{- toJson $value -}}{{- else -}}{{- index . 2 -}}{{- end -}}
{{- end -}}

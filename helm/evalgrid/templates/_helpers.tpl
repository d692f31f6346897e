{{/*
Names and labels, after KubeRay's ray-cluster chart (ray-cluster.name, .fullname, .labels).
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "evalgrid.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The full name: the prefix of every resource, and exactly the RayCluster's name. Truncated to 53
characters, KubeRay's limit for a RayCluster name (its longest Service suffix, "-serve-svc", must
still fit in 63).
*/}}
{{- define "evalgrid.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 53 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 53 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 53 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Chart name and version, for the helm.sh/chart label. */}}
{{- define "evalgrid.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object of the release carries. */}}
{{- define "evalgrid.labels" -}}
helm.sh/chart: {{ include "evalgrid.chart" . }}
{{ include "evalgrid.selectorLabels" . }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: evalgrid
{{- end -}}

{{/*
Labels that identify the release's pods. The instance label is what keeps two releases in one
namespace apart in the NetworkPolicy.
*/}}
{{- define "evalgrid.selectorLabels" -}}
app.kubernetes.io/name: {{ include "evalgrid.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The RayJob's name: KubeRay derives the submitter Job's name from it and allows 47 characters. */}}
{{- define "evalgrid.jobName" -}}
{{- default (printf "%s-sweep" (include "evalgrid.fullname" . | trunc 41 | trimSuffix "-")) .Values.job.name -}}
{{- end -}}

{{/*
The ServiceAccount of one kind of Ray pod: (list $ "head"|"worker"|"judge"). Created by the chart:
the given name or "<full name>-<kind>". Not created: the given name, or "" (serviceAccountName is
then left out of the pod).
*/}}
{{- define "evalgrid.serviceAccountName" -}}
{{- $root := index . 0 -}}
{{- $kind := index . 1 -}}
{{- $name := (index $root.Values.serviceAccount $kind).name -}}
{{- if $root.Values.serviceAccount.create -}}
{{- default (printf "%s-%s" (include "evalgrid.fullname" $root) $kind) $name -}}
{{- else -}}
{{- $name -}}
{{- end -}}
{{- end -}}

{{/* The namespace sandbox pods run in: sandbox.namespace, else the release's (see values.yaml). */}}
{{- define "evalgrid.sandboxNamespace" -}}
{{- default .Release.Namespace .Values.sandbox.namespace -}}
{{- end -}}

{{/* Whether sandbox pods have a namespace of their own ("true" or ""). */}}
{{- define "evalgrid.sandboxNamespaceIsOwn" -}}
{{- if ne (include "evalgrid.sandboxNamespace" .) .Release.Namespace -}}true{{- end -}}
{{- end -}}

{{/* The sandbox pods' ServiceAccount, or "" for the sandbox namespace's default one. */}}
{{- define "evalgrid.sandboxServiceAccountName" -}}
{{- $sa := .Values.sandbox.serviceAccount -}}
{{- if $sa.create -}}
{{- default (printf "%s-sandbox" (include "evalgrid.fullname" .)) $sa.name -}}
{{- else -}}
{{- $sa.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding the Ray auth token (key auth_token, the key KubeRay reads). */}}
{{- define "evalgrid.rayTokenSecret" -}}
{{- default (printf "%s-ray-token" (include "evalgrid.fullname" .)) .Values.ray.auth.tokenSecret -}}
{{- end -}}

{{/*
Ray token authentication of one container (every Ray container, the autoscaler sidecar and the
RayJob submitter), when ray.auth.enabled: the mode and the token, by Secret reference only (the
token never passes through Helm). KubeRay >= 1.6 would inject the same two from
spec.authOptions; setting them here keeps the chart's pods right whatever KubeRay adds, and KubeRay
leaves variables that are already set alone.
*/}}
{{- define "evalgrid.rayAuthEnv" -}}
{{- if .Values.ray.auth.enabled -}}
- name: RAY_AUTH_MODE
  value: token
- name: RAY_AUTH_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "evalgrid.rayTokenSecret" . | quote }}
      key: auth_token
{{- end -}}
{{- end -}}

{{/* "repository:tag" of an image value, the tag defaulting to the chart's appVersion. */}}
{{- define "evalgrid.imageRef" -}}
{{- $image := index . 0 -}}
{{- $root := index . 1 -}}
{{- printf "%s:%s" $image.repository (default $root.Chart.AppVersion $image.tag) -}}
{{- end -}}

{{/*
Cross-field checks the schema cannot express. Each message names the value to change. Included
once from raycluster.yaml, which is always rendered.
*/}}
{{- define "evalgrid.validate" -}}
{{- $v := .Values -}}
{{- if not (regexMatch "^[a-z]" (include "evalgrid.fullname" .)) -}}
{{- fail (printf "The RayCluster name %q must start with a letter (KubeRay wants a DNS-1035 label): set fullnameOverride, or use a release name that starts with a letter." (include "evalgrid.fullname" .)) -}}
{{- end -}}
{{- include "evalgrid.validateReplicas" (list "worker" $v.worker) -}}
{{- if $v.judges.enabled -}}
{{- include "evalgrid.validateReplicas" (list "judges" $v.judges) -}}
{{- if gt (int $v.judges.tensorParallelSize) (int $v.judges.gpusPerReplica) -}}
{{- fail (printf "judges.tensorParallelSize (%d) is larger than judges.gpusPerReplica (%d): a judge server cannot span more GPUs than its pod has. Lower judges.tensorParallelSize or raise judges.gpusPerReplica." (int $v.judges.tensorParallelSize) (int $v.judges.gpusPerReplica)) -}}
{{- end -}}
{{- if not $v.judges.model -}}
{{- fail "judges.model is required when judges.enabled is true: set it to an absolute path inside the judge pod or an s3:// URL." -}}
{{- end -}}
{{- if hasKey $v.judges.rayStartParams "resources" -}}
{{- fail "judges.rayStartParams.resources must not be set: the chart sets it to {\"evalgrid-judge\": 1}, the custom resource judge servers request." -}}
{{- end -}}
{{- if or (hasKey $v.judges.resources.requests "nvidia.com/gpu") (hasKey $v.judges.resources.limits "nvidia.com/gpu") -}}
{{- fail "judges.resources must not set nvidia.com/gpu: set judges.gpusPerReplica instead." -}}
{{- end -}}
{{- end -}}
{{- if $v.job.enabled -}}
{{- if not $v.job.inputs -}}
{{- fail "job.inputs is required when job.enabled is true: set it to the s3:// URL of the sweep inputs." -}}
{{- end -}}
{{- if not $v.job.runDir -}}
{{- fail "job.runDir is required when job.enabled is true: set it to the s3:// URL of the run directory." -}}
{{- end -}}
{{- end -}}
{{- if and $v.sandbox.createRuntimeClass (not $v.sandbox.runtimeClassName) -}}
{{- fail "sandbox.createRuntimeClass is true but sandbox.runtimeClassName is empty: set the RuntimeClass name (e.g. gvisor)." -}}
{{- end -}}
{{- if and $v.rbac.create (not $v.serviceAccount.create) (not $v.serviceAccount.worker.name) -}}
{{- fail "rbac.create is true but no ServiceAccount is named for the workers: set serviceAccount.worker.name to an existing ServiceAccount or serviceAccount.create=true (otherwise pod creation would be granted to the namespace's default ServiceAccount)." -}}
{{- end -}}
{{- if and $v.ray.auth.enabled (semverCompare "<2.52.0-0" $v.rayVersion) -}}
{{- fail (printf "ray.auth.enabled needs Ray >= 2.52.0 (token authentication), but rayVersion is %s: use a newer Ray image (and rayVersion), or set ray.auth.enabled=false." $v.rayVersion) -}}
{{- end -}}
{{- end -}}

{{/* minReplicas <= replicas <= maxReplicas for one group: (list "<values key>" <group values>). */}}
{{- define "evalgrid.validateReplicas" -}}
{{- $key := index . 0 -}}
{{- $g := index . 1 -}}
{{- $replicas := int $g.replicas -}}
{{- $min := int $g.minReplicas -}}
{{- $max := int $g.maxReplicas -}}
{{- if gt $min $max -}}
{{- fail (printf "%s.minReplicas (%d) is larger than %s.maxReplicas (%d): lower %s.minReplicas or raise %s.maxReplicas." $key $min $key $max $key $key) -}}
{{- end -}}
{{- if lt $replicas $min -}}
{{- fail (printf "%s.replicas (%d) is smaller than %s.minReplicas (%d): raise %s.replicas or lower %s.minReplicas." $key $replicas $key $min $key $key) -}}
{{- end -}}
{{- if gt $replicas $max -}}
{{- fail (printf "%s.replicas (%d) is larger than %s.maxReplicas (%d): lower %s.replicas or raise %s.maxReplicas." $key $replicas $key $max $key $key) -}}
{{- end -}}
{{- end -}}

{{/*
Environment shared by every Ray container (head, workers, judges): who and where the pod is, for
the sandbox backend (the pod UID lets a worker make its sandbox pod's owner reference, so the
sandbox is garbage-collected with the worker), the object store's endpoint and region, and Ray's
token authentication.
*/}}
{{- define "evalgrid.rayEnv" -}}
- name: EVALGRID_K8S_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: EVALGRID_K8S_POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: EVALGRID_K8S_POD_UID
  valueFrom:
    fieldRef:
      fieldPath: metadata.uid
{{- with .Values.objectStore.endpoint }}
- name: AWS_ENDPOINT_URL_S3
  value: {{ . | quote }}
{{- end }}
{{- with .Values.objectStore.region }}
- name: AWS_DEFAULT_REGION
  value: {{ . | quote }}
{{- end }}
{{- with (include "evalgrid.rayAuthEnv" .) }}
{{ . }}
{{- end }}
{{- end -}}

{{/*
envFrom of every Ray container: the object-store credentials Secret, by name only (its values
never pass through Helm), then the group's own envFrom.
Call with (list $ <group values>).
*/}}
{{- define "evalgrid.envFrom" -}}
{{- $root := index . 0 -}}
{{- $group := index . 1 -}}
{{- with $root.Values.objectStore.credentialsSecret }}
- secretRef:
    name: {{ . | quote }}
{{- end }}
{{- with $group.envFrom }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
The sandbox pod settings the workers use when they create sandbox pods, as one JSON object
(EVALGRID_K8S_SANDBOX, read by cluster/sandbox/k8s_backend.py's PodSandboxConfig, which forbids unknown
keys). The role and instance labels win over sandbox.labels: the NetworkPolicies select sandbox
pods by them. app.kubernetes.io/name is left to the backend, which names its pods itself. The
namespace is always explicit (the release's when sandbox.namespace is empty), so that the workers
never fall back to their own namespace by accident.
*/}}
{{- define "evalgrid.sandboxConfig" -}}
{{- $s := .Values.sandbox -}}
{{- $labels := merge (dict "evalgrid.io/role" "sandbox" "app.kubernetes.io/instance" .Release.Name "app.kubernetes.io/component" "sandbox") $s.labels -}}
{{- $pullSecrets := list -}}
{{- range $s.imagePullSecrets -}}
{{- $pullSecrets = append $pullSecrets .name -}}
{{- end -}}
{{- $cfg := dict
  "image" (include "evalgrid.imageRef" (list $s.image .))
  "imagePullPolicy" $s.image.pullPolicy
  "runtimeClassName" (default nil $s.runtimeClassName)
  "resources" (dict "cpu" (toString $s.resources.cpu) "memory" (toString $s.resources.memory))
  "nodeSelector" (default (dict) $s.nodeSelector)
  "tolerations" (default (list) $s.tolerations)
  "imagePullSecrets" $pullSecrets
  "labels" $labels
  "gatePort" (int $s.gatePort)
  "egressProbeTargets" (default (list) $s.egressProbeTargets)
  "requireEgressDenied" $s.requireEgressDenied
  "namespace" (include "evalgrid.sandboxNamespace" .)
  "serviceAccountName" (include "evalgrid.sandboxServiceAccountName" . | default nil)
-}}
{{- toJson $cfg -}}
{{- end -}}

{{/* Volumes every Ray pod has: Ray's session directory and a /dev/shm big enough for its object store. */}}
{{- define "evalgrid.rayVolumes" -}}
- name: ray-tmp
  emptyDir: {}
- name: dshm
  emptyDir:
    medium: Memory
    sizeLimit: {{ .Values.shmSizeLimit }}
{{- end -}}

{{- define "evalgrid.rayVolumeMounts" -}}
- name: ray-tmp
  mountPath: /tmp/ray
- name: dshm
  mountPath: /dev/shm
{{- end -}}

{{/*
rayStartParams as a YAML map of strings (KubeRay's map[string]string), to follow "rayStartParams:".
Call with (list <params> <indent>); an empty map renders inline as " {}".
*/}}
{{- define "evalgrid.rayStartParams" -}}
{{- $params := index . 0 -}}
{{- $indent := index . 1 -}}
{{- if $params -}}
{{- $strings := dict -}}
{{- range $key, $value := $params -}}
{{- $_ := set $strings $key (toString $value) -}}
{{- end -}}
{{- toYaml $strings | nindent $indent -}}
{{- else -}}
{{- " {}" -}}
{{- end -}}
{{- end -}}

{{/*
Replica fields of a worker group: (list <autoscaling enabled> <group values>).
Autoscaling on: only minReplicas/maxReplicas; `replicas` belongs to the autoscaler, and rendering
it would make every helm upgrade reset the group's size.
Autoscaling off: the group is pinned to `replicas` (min = max = replicas).
*/}}
{{- define "evalgrid.groupReplicas" -}}
{{- $autoscaling := index . 0 -}}
{{- $g := index . 1 -}}
{{- if $autoscaling -}}
minReplicas: {{ int $g.minReplicas }}
maxReplicas: {{ int $g.maxReplicas }}
{{- else -}}
replicas: {{ int $g.replicas }}
minReplicas: {{ int $g.replicas }}
maxReplicas: {{ int $g.replicas }}
{{- end -}}
{{- end -}}

{{/*
A Ray pod template (head, browser worker or judge). Called with a dict:
  root, group (the group's values), role (evalgrid.io/role), account ("head", "worker" or "judge":
  whose ServiceAccount), token (whether the pod mounts its ServiceAccount token), containerName,
  image (image values), env (extra EnvVar YAML, the role's own), resources, ports.
The Ray container is the first and only container: KubeRay and the autoscaler read containers[0].
*/}}
{{- define "evalgrid.podTemplate" -}}
{{- $root := .root -}}
{{- $g := .group -}}
{{- /* The chart's labels win over the group's: the NetworkPolicy and KubeRay select on them. */ -}}
{{- $labels := merge (fromYaml (include "evalgrid.selectorLabels" $root)) (dict "app.kubernetes.io/component" .role "evalgrid.io/role" .role) (default (dict) $g.labels) -}}
metadata:
  labels:
    {{- toYaml $labels | nindent 4 }}
  {{- with $g.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- with (include "evalgrid.serviceAccountName" (list $root .account)) }}
  serviceAccountName: {{ . }}
  {{- end }}
  # Only a pod that calls the Kubernetes API gets a token: see serviceAccount in values.yaml.
  automountServiceAccountToken: {{ .token }}
  {{- with $root.Values.podSecurityContext }}
  securityContext:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $g.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: {{ .containerName }}
      image: {{ include "evalgrid.imageRef" (list .image $root) | quote }}
      imagePullPolicy: {{ .image.pullPolicy }}
      {{- with .ports }}
      ports:
        {{- range . }}
        - name: {{ .name }}
          containerPort: {{ .containerPort }}
          protocol: TCP
        {{- end }}
      {{- end }}
      env:
        {{- include "evalgrid.rayEnv" $root | nindent 8 }}
        {{- with .env }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with $g.containerEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with (include "evalgrid.envFrom" (list $root $g) | trim) }}
      envFrom:
        {{- . | nindent 8 }}
      {{- end }}
      resources:
        {{- toYaml .resources | nindent 8 }}
      {{- with $root.Values.securityContext }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      volumeMounts:
        {{- include "evalgrid.rayVolumeMounts" $root | nindent 8 }}
        {{- with $g.volumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    {{- include "evalgrid.rayVolumes" $root | nindent 4 }}
    {{- with $g.volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* matchLabels of one kind of this release's pods, by evalgrid.io/role: (list $ "<role>"). */}}
{{- define "evalgrid.roleSelector" -}}
{{- $root := index . 0 -}}
matchLabels:
  app.kubernetes.io/instance: {{ $root.Release.Name }}
  evalgrid.io/role: {{ index . 1 }}
{{- end -}}

{{/* A label selector for this release's Ray pods: the head, the browser workers and the judges. */}}
{{- define "evalgrid.rayPodSelector" -}}
matchLabels:
  app.kubernetes.io/instance: {{ .Release.Name }}
matchExpressions:
  - key: evalgrid.io/role
    operator: In
    values: [head, worker, judge]
{{- end -}}

{{/* An egress rule to the cluster DNS only (networkPolicy.dns), UDP and TCP. */}}
{{- define "evalgrid.dnsEgress" -}}
{{- $dns := .Values.networkPolicy.dns -}}
- to:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: {{ $dns.namespace }}
      podSelector:
        matchLabels:
          {{- toYaml $dns.podLabels | nindent 10 }}
  ports:
    - protocol: UDP
      port: {{ int $dns.port }}
    - protocol: TCP
      port: {{ int $dns.port }}
{{- end -}}

{{/* An egress rule to the Kubernetes API server (networkPolicy.apiServer). */}}
{{- define "evalgrid.apiServerEgress" -}}
{{- $api := .Values.networkPolicy.apiServer -}}
- to:
    {{- range $api.cidrs }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
  ports:
    {{- range $api.ports }}
    - protocol: TCP
      port: {{ int . }}
    {{- end }}
{{- end -}}

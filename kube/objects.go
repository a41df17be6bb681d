package kube

import (
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/redline-dev/redline/cluster"
)

// dataDir is the server's working directory, an emptyDir: it survives a
// container restart (a kill), not the pod's deletion.
const dataDir = "/data"

// plan is what one cluster is made of, before anything is created.
type plan struct {
	name      string
	namespace string
	spec      cluster.Spec
	image     string
	labels    map[string]string // on every object
	hostnames bool              // announce DNS names (Options.AnnounceHostname)
	owner     map[string]string // on the StatefulSet and Service: who made them (reap.go)
}

// selector picks the cluster's pods.
func (p plan) selector() map[string]string { return map[string]string{LabelCluster: p.name} }

// podName is node n's pod: "n1" is ordinal 0.
func podName(sts, node string) string {
	i, _ := strconv.Atoi(strings.TrimPrefix(node, "n"))
	return sts + "-" + strconv.Itoa(i-1)
}

// nodeName is the node of a pod "<sts>-<ordinal>".
func nodeName(sts, pod string) (string, bool) {
	ord, ok := strings.CutPrefix(pod, sts+"-")
	if !ok {
		return "", false
	}
	i, err := strconv.Atoi(ord)
	if err != nil || i < 0 {
		return "", false
	}
	return "n" + strconv.Itoa(i+1), true
}

// serverCommand is the image's server program: `redline server` speaks
// redis-server's arguments.
func serverCommand(target string) []string {
	if target == "redis" {
		return []string{"redis-server"}
	}
	return []string{"/redline", "server"}
}

// serverArgs are the nodes' redis-server arguments. Each announces its pod
// IP ($(POD_IP), expanded by the kubelet from the downward API): a pod IP is
// what every pod and the harness's Job reach directly, as Bitnami's chart
// does. With hostnames each also announces its name under the headless
// Service and prefers it as its endpoint (Redis 7's
// cluster-preferred-endpoint-type hostname): MOVED, CLUSTER SLOTS and
// CLUSTER SHARDS then name <pod>.<service>.<namespace>.svc, which a pod
// resolves through its DNS search list whatever the cluster's domain.
func (p plan) serverArgs() []string {
	spec := p.spec
	aof := "no"
	if spec.AppendOnly {
		aof = "yes"
	}
	args := []string{
		"--port", strconv.Itoa(Port),
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(spec.NodeTimeout.Milliseconds(), 10),
		"--cluster-announce-ip", "$(POD_IP)",
		"--dir", dataDir,
		"--protected-mode", "no",
		"--save", "",
		"--appendonly", aof,
		"--appendfsync", "everysec",
	}
	if spec.Target == "redis" {
		args = append(args, "--repl-diskless-sync-delay", "0")
	}
	if p.hostnames {
		args = append(args, "--cluster-announce-hostname", p.hostname("$(POD_NAME)"), "--cluster-preferred-endpoint-type", "hostname")
	}
	args = append(args, cluster.RunUserArgs(spec.RunUser)...)
	return append(args, cluster.ConfigArgs(spec.ServerConfig)...)
}

// hostname is a pod's DNS name under the headless Service.
func (p plan) hostname(pod string) string { return pod + "." + p.name + "." + p.namespace + ".svc" }

func (p plan) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: p.namespace, Labels: p.labels, Annotations: p.owner}
}

// service is the headless Service that gives the pods stable DNS names
// (<pod>.<service>); it publishes not-ready pods so that a node being
// formed can be found by name.
func (p plan) service() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: p.meta(p.name),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 p.selector(),
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{
				{Name: "redis", Port: Port, TargetPort: intstr.FromInt32(Port)},
				{Name: "bus", Port: Port + 10000, TargetPort: intstr.FromInt32(Port + 10000)},
			},
		},
	}
}

// statefulSet runs spec.Nodes pods with stable names, all at once
// (Parallel: a cluster is formed only once every node answers).
func (p plan) statefulSet() *appsv1.StatefulSet {
	replicas := int32(p.spec.Nodes)
	grace := int64(5)
	no, yes := false, true
	podLabels := map[string]string{}
	for k, v := range p.labels {
		podLabels[k] = v
	}
	return &appsv1.StatefulSet{
		ObjectMeta: p.meta(p.name),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         p.name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: p.selector()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					// A pause signals the server from an exec in
					// its pod (pause.go): it must not be PID 1.
					ShareProcessNamespace:        &yes,
					EnableServiceLinks:           &no,
					AutomountServiceAccountToken: &no,
					Containers: []corev1.Container{{
						Name:    ContainerName,
						Image:   p.image,
						Command: serverCommand(p.spec.Target),
						Args:    p.serverArgs(),
						Env: []corev1.EnvVar{{
							Name:      "POD_IP",
							ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}},
						}, {
							Name:      "POD_NAME",
							ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
						}},
						Ports: []corev1.ContainerPort{
							{Name: "redis", ContainerPort: Port},
							{Name: "bus", ContainerPort: Port + 10000},
						},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(Port)}},
							PeriodSeconds: 2,
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: dataDir}},
					}},
					Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
}

// podReady says the pod runs, has an IP and passes its readiness probe.
func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// restarts is how often the server container was restarted.
func restarts(p *corev1.Pod) int32 {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == ContainerName {
			return s.RestartCount
		}
	}
	return 0
}

func since(t time.Time) string { return time.Since(t).Round(time.Millisecond).String() }

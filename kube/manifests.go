package kube

import (
	"bytes"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// ManifestOptions shape what `redline kube manifests` prints.
type ManifestOptions struct {
	Namespace string
	Image     string   // the Job's image (holds /redline); also the nodes' for the reference target
	Args      []string // redline's arguments after "run" (or "bench" when Args[0] is "bench"; the Job adds --runtime, --namespace, --results)
	Name      string   // the ServiceAccount, Role, RoleBinding, PVC and Job (default "redline")
	Storage   string   // the results volume's size (default 1Gi)
}

// ResultsDir is where the Job's results volume is mounted.
const ResultsDir = "/results"

// Role is exactly what a run needs in its namespace: its StatefulSet,
// Service and pods (created, watched through get/list, deleted), an exec
// into its pods (a pause is a SIGSTOP sent from inside the pod: pause.go),
// their logs, the Chaos Mesh faults and a distributed bench's generator
// Jobs. No secrets, nothing cluster-wide.
func Role(namespace, name string) *rbacv1.Role {
	crud := []string{"get", "list", "create", "delete"}
	return &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "delete"}},
			// get for an exec over WebSocket, create for one over SPDY.
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get", "create"}},
			// The servers' logs for the results store (nodes/<node>/server.log).
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: crud},
			{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: crud},
			// A distributed bench's generators: one Indexed Job a round.
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: crud},
			{APIGroups: []string{"chaos-mesh.org"}, Resources: []string{NetworkChaos, PodChaos, TimeChaos}, Verbs: crud},
		},
	}
}

// Manifests returns the objects to apply, in order: ServiceAccount, Role,
// RoleBinding, the results PersistentVolumeClaim and the Job.
func Manifests(o ManifestOptions) []runtime.Object {
	if o.Name == "" {
		o.Name = "redline"
	}
	if o.Storage == "" {
		o.Storage = "1Gi"
	}
	if o.Image == "" {
		o.Image = DefaultImage("reference")
	}
	meta := func(kind, api string) (metav1.TypeMeta, metav1.ObjectMeta) {
		return metav1.TypeMeta{APIVersion: api, Kind: kind},
			metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: map[string]string{"app.kubernetes.io/name": "redline"}}
	}
	satm, saom := meta("ServiceAccount", "v1")
	rbtm, rbom := meta("RoleBinding", "rbac.authorization.k8s.io/v1")
	pvtm, pvom := meta("PersistentVolumeClaim", "v1")
	jtm, jom := meta("Job", "batch/v1")
	role := Role(o.Namespace, o.Name)
	role.Labels = saom.Labels
	// The Job runs `redline run` unless the arguments name bench (a load
	// test: `-- bench --generators 8 --rate 200000`).
	command, rest := "run", o.Args
	if len(rest) > 0 && (rest[0] == "run" || rest[0] == "bench") {
		command, rest = rest[0], rest[1:]
	}
	args := append([]string{command, "--runtime", "kubernetes", "--namespace", o.Namespace, "--results", ResultsDir}, rest...)
	if o.Image != DefaultImage("reference") {
		args = append(args, "--image", o.Image)
	}
	backoff := int32(0)
	return []runtime.Object{
		&corev1.ServiceAccount{TypeMeta: satm, ObjectMeta: saom},
		role,
		&rbacv1.RoleBinding{
			TypeMeta: rbtm, ObjectMeta: rbom,
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: o.Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: o.Name, Namespace: o.Namespace}},
		},
		&corev1.PersistentVolumeClaim{
			TypeMeta: pvtm, ObjectMeta: pvom,
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(o.Storage)}},
			},
		},
		&batchv1.Job{
			TypeMeta: jtm, ObjectMeta: jom,
			Spec: batchv1.JobSpec{
				// A second try would start a second test: the exit
				// code is the verdict, not a failure to retry.
				BackoffLimit: &backoff,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "redline"}},
					Spec: corev1.PodSpec{
						ServiceAccountName: o.Name,
						RestartPolicy:      corev1.RestartPolicyNever,
						Containers: []corev1.Container{{
							Name:    "redline",
							Image:   o.Image,
							Command: []string{"/redline"},
							Args:    args,
							// Who redline is, on what it creates: a later
							// run reaps a cluster whose Job pod is gone.
							Env: []corev1.EnvVar{
								{Name: EnvPodName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
								{Name: EnvPodNamespace, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
								{Name: EnvPodUID, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}}},
							},
							VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: ResultsDir}},
						}},
						Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
							PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.Name},
						}}},
					},
				},
			},
		},
	}
}

// ManifestsYAML renders Manifests as one YAML stream for kubectl apply -f -.
func ManifestsYAML(o ManifestOptions) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# redline in namespace %s: apply with kubectl apply -f -, follow with\n# kubectl -n %s logs -f job/%s; the results store is on the PVC %s (%s).\n",
		o.Namespace, o.Namespace, nameOr(o.Name), nameOr(o.Name), ResultsDir)
	for i, obj := range Manifests(o) {
		y, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(strings.ReplaceAll(string(y), "  creationTimestamp: null\n", ""))
	}
	return b.Bytes(), nil
}

func nameOr(n string) string {
	if n == "" {
		return "redline"
	}
	return n
}

package kube

// The tests' Kubernetes: a real etcd and kube-apiserver, started once for
// the package (as controller-runtime's envtest does), built by
// scripts/install-kube-tools (make deps). No kubelet and no controllers run:
// fakeNode (fake_test.go) does their part.

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// env is the package's API server, nil when TestMain could not start it
// (then envErr says why and every test that needs it fails).
var (
	env    *apiServer
	envErr error
)

type apiServer struct {
	dir    string
	host   string // https://127.0.0.1:port
	caPEM  []byte // the serving certificate (self-signed, in cert-dir)
	ca     *x509.Certificate
	caKey  *rsa.PrivateKey
	admin  *rest.Config // system:masters
	procs  []*exec.Cmd
	kubeOK bool
}

// kubeAssets is where scripts/install-kube-tools puts the binaries.
func kubeAssets() (string, error) {
	if d := os.Getenv("REDLINE_KUBE_ASSETS"); d != "" {
		return d, nil
	}
	b, err := os.ReadFile("../scripts/kube-tools/go.mod")
	if err != nil {
		return "", err
	}
	var kver, ever string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "k8s.io/kubernetes" {
			kver = f[1]
		}
		if len(f) == 2 && f[0] == "go.etcd.io/etcd/server/v3" {
			ever = f[1]
		}
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "redline", "kube", kver+"-etcd"+ever), nil
}

func TestMain(m *testing.M) {
	env, envErr = startAPIServer()
	code := m.Run()
	if env != nil {
		env.stop()
	}
	os.Exit(code)
}

// needAPIServer fails the test when the API server is not there. Only
// outside CI, and with a reason that cannot be missed, does it skip.
func needAPIServer(t *testing.T) *apiServer {
	t.Helper()
	if env != nil {
		return env
	}
	msg := fmt.Sprintf("no API server for the kube tests: %v; run `make deps` (scripts/install-kube-tools builds kube-apiserver and etcd, once; it is long)", envErr)
	if os.Getenv("CI") == "" && os.Getenv("REDLINE_KUBE_REQUIRED") == "" {
		t.Skip("SKIPPING (not CI): " + msg)
	}
	t.Fatal(msg)
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startAPIServer() (*apiServer, error) {
	assets, err := kubeAssets()
	if err != nil {
		return nil, err
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(assets, b)); err != nil {
			return nil, fmt.Errorf("%s is missing in %s", b, assets)
		}
	}
	dir, err := os.MkdirTemp("", "redline-kube-env-")
	if err != nil {
		return nil, err
	}
	s := &apiServer{dir: dir}
	ok := false
	defer func() {
		if !ok {
			s.stop()
		}
	}()
	if err := s.writeCerts(); err != nil {
		return nil, err
	}
	etcdPort, _ := freePort()
	peerPort, _ := freePort()
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	if err := s.spawn("etcd", filepath.Join(assets, "etcd"),
		"--name", "redline-test", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "redline-test="+peerURL, "--unsafe-no-fsync",
		"--log-level", "warn"); err != nil {
		return nil, err
	}
	port, _ := freePort()
	if err := s.spawn("kube-apiserver", filepath.Join(assets, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--cert-dir", filepath.Join(dir, "certs"),
		"--secure-port", strconv.Itoa(port), "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--client-ca-file", filepath.Join(dir, "ca.crt"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		// No controller-manager runs to make the default service
		// account: pods get none.
		"--disable-admission-plugins", "ServiceAccount",
		// The kubernetes Service's endpoint may not be loopback.
		"--endpoint-reconciler-type", "none",
		"--allow-privileged"); err != nil {
		return nil, err
	}
	s.host = "https://127.0.0.1:" + strconv.Itoa(port)
	admin, err := s.userConfig("redline-test-admin", "system:masters")
	if err != nil {
		return nil, err
	}
	s.admin = admin
	if err := s.waitReady(90 * time.Second); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

func (s *apiServer) spawn(name, bin string, args ...string) error {
	logf, err := os.Create(filepath.Join(s.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	s.procs = append(s.procs, cmd)
	return nil
}

func (s *apiServer) stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	if os.Getenv("REDLINE_KUBE_KEEP") == "" {
		os.RemoveAll(s.dir)
	}
}

// logTail is the end of a program's log, for an error message.
func (s *apiServer) logTail(name string) string {
	f, err := os.Open(filepath.Join(s.dir, name+".log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 15 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

func (s *apiServer) waitReady(timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(s.admin)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, last = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready after %s: %v\n--- kube-apiserver log:\n%s\n--- etcd log:\n%s", timeout, last, s.logTail("kube-apiserver"), s.logTail("etcd"))
}

// writeCerts makes the client CA (the API server trusts certificates it
// signs; the user is the CN, the groups are O) and the service account key.
func (s *apiServer) writeCerts() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redline-test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	s.ca, _ = x509.ParseCertificate(der)
	s.caKey = key
	if err := os.WriteFile(filepath.Join(s.dir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(s.dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(sa)}), 0o600)
}

// userConfig is a client configuration authenticated as user (and groups)
// by a certificate of the test's CA. The serving certificate is the API
// server's own self-signed one, not checked (loopback, the test's process).
func (s *apiServer) userConfig(user string, groups ...string) (*rest.Config, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: user, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.caKey)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: s.host,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure: true,
			CertData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			KeyData:  pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		},
		QPS: 100, Burst: 200,
	}, nil
}

// kubeconfigFile writes cfg as a kubeconfig for a redline process.
func kubeconfigFile(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	y := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: test
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`, cfg.Host, b64(cfg.CertData), b64(cfg.KeyData))
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// installChaosCRDs installs testdata's Chaos Mesh CRDs (once per package)
// and waits until discovery serves them.
func (s *apiServer) installChaosCRDs(t *testing.T) {
	t.Helper()
	if s.kubeOK {
		return
	}
	data, err := os.ReadFile("testdata/chaos-mesh-crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	ctx := context.Background()
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if len(obj) == 0 {
			continue
		}
		if _, err := crds.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("installing Chaos Mesh CRD: %v", err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(s.admin)
	deadline := time.Now().Add(30 * time.Second)
	for {
		kinds, err := servedChaosKinds(cs)
		if err == nil && len(kinds) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chaos Mesh CRDs not served after 30s: %v %v", kinds, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.kubeOK = true
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

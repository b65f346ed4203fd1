package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/testtls"
)

const tlsToken = "tls-test-token"

// tlsDaemon is a real schedd (Run) on a SQLite file in a temporary
// directory, listening with TLS on 127.0.0.1 at a port the kernel chose.
type tlsDaemon struct {
	addr   string // HOST:PORT
	reload chan os.Signal
	log    *syncBuffer
}

// startTLSDaemon runs schedd with the token and extra flags (--tls-cert
// and the rest) and returns once its TCP address is known.
func startTLSDaemon(t *testing.T, extra ...string) *tlsDaemon {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"--store", "sqlite:" + filepath.Join(dir, "s.db"), "--listen", "tcp:127.0.0.1:0", "--token", tlsToken}, extra...)
	cfg, err := ParseConfig(args, envOf("HOME", dir, "XDG_DATA_HOME", dir, "XDG_RUNTIME_DIR", dir), "v", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	d := &tlsDaemon{reload: make(chan os.Signal, 1), log: &syncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		ran <- Run(ctx, cfg, Options{Version: "v", Env: envOf("HOME", dir), Reload: d.reload,
			Logger: slog.New(slog.NewTextHandler(d.log, nil))})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("run: %v", err)
		}
		if t.Failed() {
			t.Logf("schedd log:\n%s", d.log.String())
		}
	})
	started := regexp.MustCompile(`msg="schedd started".* listen=tcp:(127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := started.FindStringSubmatch(d.log.String()); m != nil {
			d.addr = m[1]
			return d
		}
		select {
		case err := <-ran:
			ran <- err
			t.Fatalf("schedd exited before serving: %v\n%s", err, d.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedd did not start:\n%s", d.log.String())
		}
	}
}

// status asks GET /v1/status over TLS with tc and returns the status code,
// and the leaf certificate the daemon presented.
func (d *tlsDaemon) status(t *testing.T, tc *tls.Config) (int, *x509.Certificate, error) {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest("GET", "https://"+d.addr+"/v1/status", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tlsToken)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.TLS.PeerCertificates[0], nil
}

// servedSerial is the serial of the certificate a new handshake sees.
func (d *tlsDaemon) servedSerial(t *testing.T, pool *x509.CertPool) *big.Int {
	t.Helper()
	code, leaf, err := d.status(t, &tls.Config{RootCAs: pool})
	if err != nil || code != 200 {
		t.Fatalf("status: %d, %v", code, err)
	}
	return leaf.SerialNumber
}

func TestTLSListener(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testtls.NewCA(t, "sched test CA")
	certFile, keyFile := ca.Server(t, "127.0.0.1", "localhost").Write(t, dir, "server")
	d := startTLSDaemon(t, "--tls-cert", certFile, "--tls-key", keyFile)

	if code, _, err := d.status(t, &tls.Config{RootCAs: ca.Pool()}); err != nil || code != 200 {
		t.Fatalf("with the CA: %d, %v; want 200", code, err)
	}
	// Without the CA (the system roots) the daemon's certificate is not trusted.
	_, _, err := d.status(t, &tls.Config{})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("without the CA: %v; want an unknown authority error", err)
	}
	// TLS 1.1 at most: the daemon refuses the version.
	_, _, err = d.status(t, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	if err == nil || !strings.Contains(err.Error(), "protocol version not supported") {
		t.Fatalf("TLS 1.1 client: %v; want the daemon to refuse the version", err)
	}
	// Plain HTTP on the TLS port is refused.
	resp, err := http.Get("http://" + d.addr + "/healthz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP was served on the TLS listener")
		}
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testtls.NewCA(t, "sched server CA")
	clientCA := testtls.NewCA(t, "sched client CA")
	otherCA := testtls.NewCA(t, "another CA")
	certFile, keyFile := ca.Server(t, "127.0.0.1").Write(t, dir, "server")
	d := startTLSDaemon(t, "--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", clientCA.WriteCA(t, dir, "clients.pem"))

	// The client sends its certificate whatever CAs the daemon asks for
	// (Go's default would send none from another CA).
	present := func(p *testtls.Pair) func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if p == nil {
				return &tls.Certificate{}, nil
			}
			c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
			return &c, err
		}
	}
	mallory, worker := otherCA.Client(t, "mallory"), clientCA.Client(t, "worker-1")
	cases := []struct {
		name string
		pair *testtls.Pair
		ok   bool
		want string // the daemon's alert
	}{
		{"no client certificate", nil, false, "certificate required"},
		{"a certificate of another CA", &mallory, false, "unknown certificate authority"},
		{"a certificate of the client CA", &worker, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, err := d.status(t, &tls.Config{RootCAs: ca.Pool(), GetClientCertificate: present(tc.pair)})
			switch {
			case tc.ok && (err != nil || code != 200):
				t.Fatalf("%d, %v; want 200", code, err)
			case !tc.ok && err == nil:
				t.Fatalf("served (%d) without a valid client certificate", code)
			case !tc.ok && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("%v; want the daemon's alert %q", err, tc.want)
			}
		})
	}
}

// A new pair replaces the old on SIGHUP, and on a change of the files,
// for new handshakes, without a restart; a broken new file leaves the old
// pair in service.
func TestTLSReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca1, ca2 := testtls.NewCA(t, "CA one"), testtls.NewCA(t, "CA two")
	first := ca1.Server(t, "127.0.0.1")
	certFile, keyFile := first.Write(t, dir, "server")
	d := startTLSDaemon(t, "--tls-cert", certFile, "--tls-key", keyFile)
	both := ca1.Pool()
	both.AddCert(ca2.Cert)

	if got := d.servedSerial(t, both); got.Cmp(first.Cert.SerialNumber) != 0 {
		t.Fatalf("serving serial %x, want the first %x", got, first.Cert.SerialNumber)
	}
	// SIGHUP after a pair of another CA is put in place.
	second := ca2.Server(t, "127.0.0.1")
	second.Replace(t, certFile, keyFile, time.Now())
	d.reload <- syscall.SIGHUP
	waitServing(t, d, both, second.Cert.SerialNumber)
	if _, _, err := d.status(t, &tls.Config{RootCAs: ca1.Pool()}); err == nil {
		t.Fatal("the first CA still verifies the daemon after the reload")
	}

	// A broken certificate file: the second pair stays, and the log names the file.
	if err := os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d.reload <- syscall.SIGHUP
	waitLog(t, d, "cannot reload the TLS certificate")
	if !strings.Contains(d.log.String(), certFile) {
		t.Fatalf("the warning does not name %s:\n%s", certFile, d.log.String())
	}
	if got := d.servedSerial(t, both); got.Cmp(second.Cert.SerialNumber) != 0 {
		t.Fatalf("after a broken file: serving %x, want the second pair %x still", got, second.Cert.SerialNumber)
	}
	// A key that does not match the certificate: the same.
	third := ca1.Server(t, "127.0.0.1")
	if err := os.WriteFile(certFile, third.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, second.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	d.reload <- syscall.SIGHUP
	waitLog(t, d, "does not match")
	if !strings.Contains(d.log.String(), keyFile) {
		t.Fatalf("the mismatch warning does not name %s:\n%s", keyFile, d.log.String())
	}
	if got := d.servedSerial(t, both); got.Cmp(second.Cert.SerialNumber) != 0 {
		t.Fatalf("after a mismatched key: serving %x, want the second pair %x still", got, second.Cert.SerialNumber)
	}

	// No signal: the files change, and a handshake over a second later sees it.
	third.Replace(t, certFile, keyFile, time.Now().Add(time.Minute))
	waitServing(t, d, both, third.Cert.SerialNumber)
}

func waitServing(t *testing.T, d *tlsDaemon, pool *x509.CertPool, want *big.Int) {
	t.Helper()
	var got *big.Int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = d.servedSerial(t, pool); got.Cmp(want) == 0 {
			return
		}
	}
	t.Fatalf("still serving %x, want %x", got, want)
}

func waitLog(t *testing.T, d *tlsDaemon, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(d.log.String(), want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", want, d.log.String())
		}
	}
}

// The reloader alone: a change of the files is seen at most every
// checkEvery, from a handshake; an unchanged file is not read again.
func TestCertReloaderWatchesFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testtls.NewCA(t, "CA")
	first := ca.Server(t, "127.0.0.1")
	certFile, keyFile := first.Write(t, dir, "s")
	log := &syncBuffer{}
	r, err := newCertReloader(certFile, keyFile, slog.New(slog.NewTextHandler(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serial := func() *big.Int {
		c, err := r.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return leaf.SerialNumber
	}
	second := ca.Server(t, "127.0.0.1")
	second.Replace(t, certFile, keyFile, time.Now().Add(time.Minute))
	// Within checkEvery of the load: not looked at yet.
	r.checkEvery = time.Hour
	if got := serial(); got.Cmp(first.Cert.SerialNumber) != 0 {
		t.Fatalf("looked at the files before checkEvery: %x", got)
	}
	r.checkEvery = 0
	if got := serial(); got.Cmp(second.Cert.SerialNumber) != 0 {
		t.Fatalf("after the change: %x, want %x", got, second.Cert.SerialNumber)
	}
	if n := strings.Count(log.String(), "reloaded TLS certificate"); n != 1 {
		t.Fatalf("%d reloads logged, want 1:\n%s", n, log.String())
	}
	serial() // unchanged files: no reload
	if n := strings.Count(log.String(), "reloaded TLS certificate"); n != 1 {
		t.Fatalf("reloaded unchanged files:\n%s", log.String())
	}
}

func TestTLSConfig(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "HOME", "/home/u")
	// Accepted: a non-loopback address with TLS and a token; the
	// environment's variables.
	cfg, err := ParseConfig([]string{"--listen", "tcp:0.0.0.0:0", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--token", "t"}, env, "v", io.Discard)
	if err != nil {
		t.Fatalf("non-loopback with TLS: %v", err)
	}
	if !cfg.TLSEnabled() || cfg.InsecureListen {
		t.Fatalf("config %+v", cfg)
	}
	cfg, err = ParseConfig([]string{"--listen", "tcp:0.0.0.0:0"}, envOf("XDG_DATA_HOME", "/data",
		"SCHED_TLS_CERT", "/e/c.pem", "SCHED_TLS_KEY", "/e/k.pem", "SCHED_TLS_CLIENT_CA", "/e/ca.pem", "SCHED_TOKEN", "t"), "v", io.Discard)
	if err != nil || cfg.TLSCert != "/e/c.pem" || cfg.TLSKey != "/e/k.pem" || cfg.TLSClientCA != "/e/ca.pem" {
		t.Fatalf("from the environment: %+v, %v", cfg, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "tcp:0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert is given without --tls-key"},
		{[]string{"--tls-key", "k.pem"}, "--tls-key is given without --tls-cert"},
		{[]string{"--tls-client-ca", "ca.pem"}, "--tls-client-ca needs --tls-cert"},
		{[]string{"--listen", "https://0.0.0.0:443"}, "--tls-cert"},
	} {
		_, err := ParseConfig(tc.args, env, "v", io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// Files that do not load stop the daemon before it listens, naming them.
func TestTLSFilesRefusedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testtls.NewCA(t, "CA")
	certFile, keyFile := ca.Server(t, "127.0.0.1").Write(t, dir, "s")
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing cert", []string{"--tls-cert", filepath.Join(dir, "nope.crt"), "--tls-key", keyFile}, "nope.crt"},
		{"bad cert", []string{"--tls-cert", bad, "--tls-key", keyFile}, bad},
		{"bad key", []string{"--tls-cert", certFile, "--tls-key", bad}, bad},
		{"bad client CA", []string{"--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", bad}, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--store", "sqlite:" + filepath.Join(t.TempDir(), "s.db"), "--listen", "tcp:127.0.0.1:0"}, tc.args...)
			cfg, err := ParseConfig(args, envOf("HOME", dir, "XDG_DATA_HOME", dir), "v", io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			err = Run(t.Context(), cfg, Options{Version: "v", Env: envOf("HOME", dir)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want an error naming %s", err, tc.want)
			}
		})
	}
}

// The registry records a TLS listener as clients dial it.
func TestListenAddressesWithTLS(t *testing.T) {
	t.Parallel()
	ls := []Listen{{Network: "unix", Address: "/s.sock"}, {Network: "tcp", Address: "0.0.0.0:7443"}}
	if got, want := listenAddresses(ls, true), "unix:/s.sock,tls:0.0.0.0:7443"; got != want {
		t.Errorf("with TLS: %q, want %q", got, want)
	}
	if got, want := listenAddresses(ls, false), "unix:/s.sock,tcp:0.0.0.0:7443"; got != want {
		t.Errorf("without TLS: %q, want %q", got, want)
	}
}

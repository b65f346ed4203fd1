package client_test

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sched-dev/sched/client"
	"github.com/sched-dev/sched/internal/testtls"
)

// tlsServer serves a minimal /v1/status over TLS with a certificate for
// hosts signed by ca, requiring a client certificate of clientCA if given.
func tlsServer(t *testing.T, ca *testtls.CA, clientCA *testtls.CA, hosts ...string) string {
	t.Helper()
	pair := ca.Server(t, hosts...)
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"version":"v","node_id":"n1"}`))
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCA != nil {
		ts.TLS.ClientCAs, ts.TLS.ClientAuth = clientCA.Pool(), tls.RequireAndVerifyClientCert
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "https://")
}

// Each TLS failure is a *DialError that says what is wrong and what to
// give; the right files connect, by tls: and by https://.
func TestTLSAddresses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, clientCA, other := testtls.NewCA(t, "server CA"), testtls.NewCA(t, "client CA"), testtls.NewCA(t, "other CA")
	caFile, otherFile := ca.WriteCA(t, dir, "ca.pem"), other.WriteCA(t, dir, "other.pem")
	goodCert, goodKey := clientCA.Client(t, "worker").Write(t, dir, "good")
	badCert, badKey := other.Client(t, "mallory").Write(t, dir, "bad")

	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	hp := tlsServer(t, ca, nil, "127.0.0.1")
	wrongName := tlsServer(t, ca, nil, "sched.example")
	mutual := tlsServer(t, ca, clientCA, "127.0.0.1")

	cases := []struct {
		name  string
		addr  string
		files client.TLSFiles
		want  string // "" for success; else in the error
	}{
		{"tls: with the CA", "tls:" + hp, client.TLSFiles{CA: caFile}, ""},
		{"https:// with the CA", "https://" + hp, client.TLSFiles{CA: caFile}, ""},
		{"the system roots", "tls:" + hp, client.TLSFiles{}, "not signed by a CA this system trusts"},
		{"another CA", "tls:" + hp, client.TLSFiles{CA: otherFile}, "not signed by the CA in --tls-ca (" + otherFile + ")"},
		{"a name the certificate does not list", "tls:" + wrongName, client.TLSFiles{CA: caFile}, "not valid for 127.0.0.1"},
		{"a daemon without TLS", "tls:" + strings.TrimPrefix(plain.URL, "http://"), client.TLSFiles{CA: caFile}, "does not speak TLS"},
		{"mTLS without a client certificate", "tls:" + mutual, client.TLSFiles{CA: caFile}, "give --tls-client-cert and --tls-client-key"},
		{"mTLS with a certificate of another CA", "tls:" + mutual, client.TLSFiles{CA: caFile, ClientCert: badCert, ClientKey: badKey}, "signed by a CA the daemon trusts"},
		{"mTLS with a good certificate", "tls:" + mutual, client.TLSFiles{CA: caFile, ClientCert: goodCert, ClientKey: goodKey}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(tc.addr, "", client.WithTLSFiles(tc.files))
			if err != nil {
				t.Fatal(err)
			}
			st, err := c.Status(t.Context())
			if tc.want == "" {
				if err != nil || st.NodeID != "n1" {
					t.Fatalf("status: %+v, %v", st, err)
				}
				return
			}
			t.Log(err)
			var de *client.DialError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want a DialError saying %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.addr) {
				t.Errorf("%v does not name the address %s", err, tc.addr)
			}
		})
	}
}

// A tcp: address to a TLS listener is a failure to connect that names
// the tls: address to use, not invalid input.
func TestPlainHTTPToTLS(t *testing.T) {
	t.Parallel()
	hp := tlsServer(t, testtls.NewCA(t, "CA"), nil, "127.0.0.1")
	c, err := client.New("tcp:"+hp, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Status(t.Context())
	var de *client.DialError
	if !errors.As(err, &de) || client.IsInvalid(err) || !strings.Contains(err.Error(), "use tls:"+hp) {
		t.Fatalf("%v; want a DialError naming tls:%s", err, hp)
	}
}

func TestTLSFilesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testtls.NewCA(t, "CA")
	cert, key := ca.Client(t, "w").Write(t, dir, "w")
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		files client.TLSFiles
		want  string
	}{
		{client.TLSFiles{CA: filepath.Join(dir, "missing.pem")}, "missing.pem"},
		{client.TLSFiles{CA: junk}, "holds no PEM certificate"},
		{client.TLSFiles{ClientCert: cert}, "without its key"},
		{client.TLSFiles{ClientKey: key}, "without its certificate"},
		{client.TLSFiles{ClientCert: cert, ClientKey: junk}, junk},
	} {
		_, err := client.New("tls:127.0.0.1:1", "", client.WithTLSFiles(tc.files))
		if !errors.Is(err, client.ErrInvalidTLS) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want ErrInvalidTLS saying %q", tc.files, err, tc.want)
		}
	}
	// Other addresses ignore the files.
	if _, err := client.New("tcp:127.0.0.1:1", "", client.WithTLSFiles(client.TLSFiles{CA: junk})); err != nil {
		t.Errorf("tcp: with TLS files: %v", err)
	}
}

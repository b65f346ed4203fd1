package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// TLSEnabled reports whether the TCP listeners serve TLS (--tls-cert and
// --tls-key are set).
func (c Config) TLSEnabled() bool { return c.TLSCert != "" && c.TLSKey != "" }

// certCheckEvery is how often, at most, the certificate's files are looked
// at for a change: from the handshakes, so an idle daemon does nothing.
const certCheckEvery = time.Second

// certReloader holds the server certificate and replaces it, without a
// restart, when asked (SIGHUP: Reload) or when its files change (checked
// from GetCertificate, at most every checkEvery). A reload that fails
// keeps the certificate being served and logs a warning naming the file:
// a half-written renewal must not take the API down.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger
	checkEvery        time.Duration

	mu        sync.Mutex
	cert      *tls.Certificate
	stamp     [2]fileStamp // of certFile and keyFile at the last load tried
	lastCheck time.Time
}

// fileStamp is what tells a changed file from the one loaded: its
// modification time and size.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}
}

// newCertReloader loads the certificate and key; an error here stops the
// daemon from starting.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log, checkEvery: certCheckEvery}
	r.stamp = [2]fileStamp{stampOf(certFile), stampOf(keyFile)}
	cert, err := loadKeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	r.cert, r.lastCheck = cert, time.Now()
	return r, nil
}

// loadKeyPair reads a PEM certificate chain and its key; its errors name
// the file at fault.
func loadKeyPair(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	if err := checkCertPEM(certPEM); err != nil {
		return nil, fmt.Errorf("TLS certificate %s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("TLS key %s (for the certificate %s): %w", keyFile, certFile, err)
	}
	return &cert, nil
}

// checkCertPEM requires at least one PEM CERTIFICATE block and that each
// parses, so that a failure of the pair afterwards is the key's.
func checkCertPEM(b []byte) error {
	n := 0
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			return fmt.Errorf("certificate %d: %w", n+1, err)
		}
		n++
	}
	if n == 0 {
		return errors.New("no PEM CERTIFICATE block")
	}
	return nil
}

// GetCertificate is tls.Config.GetCertificate: the current certificate,
// after a look at its files if the last was over checkEvery ago.
func (r *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.lastCheck) >= r.checkEvery {
		r.lastCheck = now
		if s := [2]fileStamp{stampOf(r.certFile), stampOf(r.keyFile)}; s != r.stamp {
			r.reloadLocked("files changed")
		}
	}
	return r.cert, nil
}

// Reload loads the files again, whether they changed or not (SIGHUP). It
// reports whether the new certificate is now served.
func (r *certReloader) Reload() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastCheck = time.Now()
	return r.reloadLocked("SIGHUP")
}

// reloadLocked loads the pair; on failure it keeps the old one and warns.
// The stamps are those of the files tried, so that a broken file is
// warned about once, and tried again when it changes.
func (r *certReloader) reloadLocked(why string) bool {
	r.stamp = [2]fileStamp{stampOf(r.certFile), stampOf(r.keyFile)}
	cert, err := loadKeyPair(r.certFile, r.keyFile)
	if err != nil {
		r.log.Warn("cannot reload the TLS certificate; still serving the old one", "reason", why, "err", err)
		return false
	}
	r.cert = cert
	attrs := []any{"reason", why, "cert", r.certFile}
	if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
		attrs = append(attrs, "serial", leaf.SerialNumber.Text(16), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	r.log.Info("reloaded TLS certificate", attrs...)
	return true
}

// serverTLS is the TLS configuration of the TCP listeners, or nil without
// --tls-cert: TLS 1.2 at least, Go's default cipher suites, the
// certificate from r, and with --tls-client-ca a client certificate
// required and verified against that CA.
func serverTLS(cfg Config, r *certReloader) (*tls.Config, error) {
	if r == nil {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.GetCertificate}
	if cfg.TLSClientCA != "" {
		b, err := os.ReadFile(cfg.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("TLS client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if err := checkCertPEM(b); err != nil {
			return nil, fmt.Errorf("TLS client CA %s: %w", cfg.TLSClientCA, err)
		}
		pool.AppendCertsFromPEM(b)
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// reloadOnSignal reloads r and then calls tz (the tz database's reload,
// tzreload.go) each time reload receives, until done closes. Without TLS
// there is no certificate to reload; it says so.
func reloadOnSignal(reload <-chan os.Signal, done <-chan struct{}, r *certReloader, log *slog.Logger, tz func()) {
	for {
		select {
		case <-done:
			return
		case <-reload:
			if r == nil {
				log.Info("SIGHUP: no certificate to reload (no --tls-cert)")
			} else {
				r.Reload()
			}
			if tz != nil {
				tz()
			}
		}
	}
}
